"""schemathesis against a real `braid serve` (a process, its SQLite store, HTTP over
loopback), from the OpenAPI document it serves: whatever is sent, never a 5xx, and no
refused request (4xx) changes a row of the store.

Bounded: `MAX_EXAMPLES` generated cases per operation, the same ones every run
(derandomized), and no new case is sent once `TIME_BOUND` seconds have passed (on the
2-core development host the run takes about a minute). Callers take turns: an
operator, a user, no token and a wrong one, so that the operators' routes, the users'
routes and the refusals are all reached.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings

from braid.adapters.free_ports import free_port
from braid.testing.serving import wait_healthy

pytestmark = pytest.mark.slow

BRAID = str(Path(sys.executable).parent / "braid")
EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "science-net.yaml"
MAX_EXAMPLES = 40
TIME_BOUND = 150.0  # seconds
# Every table a request could change; `leases` is the replicas' own heartbeat.
TABLES = (
    "topology_versions", "links", "reservations", "reservation_paths", "link_loads",
    "users", "tokens", "audit_log", "state", "provisioning", "nsi_connections",
)  # fmt: skip


class Live:
    def __init__(self, workdir: Path) -> None:
        self.database = workdir / "braid.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.began = 0.0
        self.sent = 0
        self.refused = 0
        self.callers: Iterator[dict[str, str]] = iter(())

    def token(self, user: str, role: str) -> str:
        made = subprocess.run(
            [BRAID, "token", "create", "--user", user, "--role", role,
             "--database", f"sqlite:///{self.database}"],
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        return next(w for w in made.stdout.split() if w.startswith("brd_"))

    def snapshot(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of every table a request could change, read beside the server."""
        with sqlite3.connect(f"file:{self.database}?mode=ro", uri=True, timeout=30) as db:
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
            return {
                t: sorted(db.execute(f"SELECT * FROM {t}"), key=repr) for t in TABLES if t in names
            }


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    workdir = tmp_path_factory.mktemp("schemathesis-live")
    served = Live(workdir)
    # No ticks during the run: a clock-driven transition is a change no request made.
    env = {**os.environ, "BRAID_TICK_SECONDS": "86400"}
    command = [BRAID, "serve", "-t", str(EXAMPLE), "--port", str(served.port),
               "--database", f"sqlite:///{served.database}"]  # fmt: skip
    with (workdir / "serve.log").open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            wait_healthy(served.url, process)
            olga, alice = served.token("olga", "operator"), served.token("alice", "user")
            served.callers = itertools.cycle(
                [
                    {"Authorization": f"Bearer {olga}"},
                    {"Authorization": f"Bearer {alice}"},
                    {},
                    {"Authorization": "Bearer brd_wrong"},
                ]
            )
            served.began = time.monotonic()
            yield served
        finally:
            process.terminate()
            process.wait(timeout=30)
    log_text = (workdir / "serve.log").read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log_text, log_text[-3000:]


def _real_nodes(case: Any) -> None:
    """Random node ids are almost never in the topology; real ones for half the cases
    (by the generated id's length, so runs stay reproducible), so generated bandwidths,
    times and modes get past the first check."""
    for where in (case.body, case.query):
        if isinstance(where, dict):
            src, dst = where.get("src"), where.get("dst")
            if isinstance(src, str) and isinstance(dst, str) and len(src) % 2 == 0:
                where["src"], where["dst"] = "ORNL", "NERSC"


def test_no_5xx_and_no_refusal_changes_the_store(live: Live) -> None:
    schema = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    # An operation the document describes badly is an Err, whose .ok() raises: a failure.
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    assert len(operations) >= 25, "the live document lists too few operations"
    for operation in operations:
        _fuzz(live, operation)
    assert live.sent >= len(operations) and live.refused > 0, (live.sent, live.refused)
    took = time.monotonic() - live.began
    print(f"schemathesis: {live.sent} cases, {live.refused} refused, {took:.0f} s")


def _fuzz(live: Live, operation: Any) -> None:
    @given(case=operation.as_strategy())
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure names its case
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    def one(case: Any) -> None:
        if time.monotonic() - live.began > TIME_BOUND:
            return  # the bound: what was not sent in time is not sent
        _check(live, case)

    one()


def _check(live: Live, case: Any) -> None:
    _real_nodes(case)
    case.headers = {**(case.headers or {}), **next(live.callers)}
    before = live.snapshot()
    response = case.call(base_url=live.url, timeout=30)
    live.sent += 1
    unconfigured = response.status_code == 503 and case.path.startswith("/v1/interdomain")
    assert response.status_code < 500 or unconfigured, (
        f"{case.method} {case.path} {case.query} {case.body!r}: "
        f"{response.status_code} {response.text[:500]}"
    )
    if 400 <= response.status_code < 500 or unconfigured:
        live.refused += 1
        after = live.snapshot()
        changed = [t for t in before if before[t] != after.get(t)]
        assert not changed, (
            f"{case.method} {case.path} refused ({response.status_code}) yet changed {changed}"
        )
