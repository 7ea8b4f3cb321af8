"""`braid serve`, `braid token` and the REST client commands, as real processes.

One server process on a free port and a temporary SQLite file; the client
commands run as subprocesses with --json. The restart test kills the server
with SIGKILL and starts a new one on the same database.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from braid.adapters.free_ports import free_port
from braid.testing.serving import ServeNotReadyError, wait_healthy

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "science-net.yaml"
# Tomorrow, on the hour: the server runs on the wall clock, so windows must lie ahead of it.
BASE = (int(time.time()) // 3600 + 24) * 3600


def iso(hours: float) -> str:
    instant = datetime.fromtimestamp(BASE + int(hours * 3600), UTC)
    return instant.isoformat().replace("+00:00", "Z")


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any BRAID_* settings of the machine running the tests."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAID_")}
    return {**env, **extra}


def braid(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "braid.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env if env is not None else clean_env(),
    )


@dataclass
class Server:
    database: str
    processes: list[subprocess.Popen[str]] = field(default_factory=list)
    url: str = ""

    def start(self) -> None:
        """Start `braid serve` on a new free port and wait until /healthz answers."""
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "braid.cli.main", "serve", "--database", self.database,
             "--topology", str(EXAMPLE), "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=clean_env(),
        )  # fmt: skip
        self.processes.append(process)
        self.url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(self.url, process)
        except ServeNotReadyError as exc:
            pytest.fail(f"{exc}:\n{process.stdout and process.stdout.read()}")

    @property
    def process(self) -> subprocess.Popen[str]:
        return self.processes[-1]

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)
            if process.stdout:
                process.stdout.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(database=f"sqlite:///{tmp_path}/braid.db")
    try:
        running.start()
        yield running
    finally:
        running.stop_all()


@pytest.fixture
def client_env(server: Server) -> dict[str, str]:
    made = braid("token", "create", "--user", "alice", "--role", "user",
                 "--database", server.database)  # fmt: skip
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert token.startswith("brd_") and f"export BRAID_TOKEN={token}" in made.stderr
    return clean_env(BRAID_URL=server.url, BRAID_TOKEN=token)


def run_json(env: dict[str, str], *args: str, expect: int = 0) -> Any:
    result = braid(*args, "--json", env=env)
    assert result.returncode == expect, (args, result.stdout, result.stderr)
    return json.loads(result.stdout)


def booking(bandwidth: str, start: float = 1, end: float = 2) -> list[str]:
    return ["reserve", "--src", "ORNL", "--dst", "NERSC", "--bandwidth", bandwidth,
            "--start", iso(start), "--end", iso(end)]  # fmt: skip


def test_reserve_list_show_modify_availability_cancel(client_env: dict[str, str]) -> None:
    env = client_env
    view = run_json(env, *booking("30G"))
    assert view["state"] == "reserved" and view["bandwidth"] == 30000 and view["paths"]
    assert [r["id"] for r in run_json(env, "list")["reservations"]] == [view["id"]]
    assert run_json(env, "show", view["id"]) == view
    longer = run_json(env, "modify", view["id"], "--end", iso(3))
    assert (longer["end"], longer["version"]) == (iso(3), 2)
    ask = ["--mode", "earliest", "--src", "ORNL", "--dst", "NERSC", "--bandwidth", "45G"]
    answer = run_json(env, "availability", *ask, "--duration", "3600", "--not-before", iso(1))
    assert answer["start"] == iso(3)  # once the 30G booking ends
    cancelled = run_json(env, "cancel", view["id"])
    assert cancelled["state"] == "cancelled"
    assert run_json(env, "list", "--state", "reserved")["reservations"] == []


def test_a_rejection_shows_the_alternatives_and_accept_takes_one(
    client_env: dict[str, str],
) -> None:
    env = client_env
    run_json(env, *booking("30G"))
    refused = braid(*booking("45G"), env=env)
    assert refused.returncode == 1
    assert "rejected" in refused.stderr
    assert (
        "--accept earliest_start" in refused.stderr and "--accept max_bandwidth" in refused.stderr
    )
    error = run_json(env, *booking("45G"), expect=1)["error"]
    assert {a["kind"] for a in error["alternatives"]} == {
        "earliest_start",
        "max_bandwidth",
        "split",
    }
    taken = run_json(env, *booking("45G"), "--accept", "max_bandwidth")
    assert taken["bandwidth"] == 40000


def test_the_client_says_what_is_wrong(server: Server, client_env: dict[str, str]) -> None:
    missing = braid("show", "r-nothere", env=client_env)
    assert missing.returncode == 1 and "no reservation" in missing.stderr
    bad = braid(*booking("30G", start=2, end=1), env=client_env)
    assert bad.returncode == 2 and "end:" in bad.stderr
    no_token = braid("list", env=clean_env(BRAID_URL=server.url))
    assert no_token.returncode == 2 and "set BRAID_TOKEN" in no_token.stderr
    nobody = braid("list", "--url", f"http://127.0.0.1:{free_port()}", env=client_env)
    assert nobody.returncode == 2 and "is `braid serve` running?" in nobody.stderr
    role = braid("token", "create", "--user", "x", "--role", "admin", "--database", server.database)
    assert role.returncode == 2 and "--role must be one of user, operator" in role.stderr


def test_after_a_crash_bookings_survive_and_still_count(
    server: Server, client_env: dict[str, str]
) -> None:
    env = client_env
    north = run_json(env, *booking("40G"))
    south = run_json(env, *booking("40G"))
    run_json(env, "cancel", south["id"])
    again = run_json(env, *booking("40G"))
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=10)
    server.start()  # same database, new process
    env = {**env, "BRAID_URL": server.url}
    for before in (north, again):
        after = run_json(env, "show", before["id"])
        assert (after["state"], after["paths"], after["version"]) == (
            "reserved", before["paths"], before["version"]
        )  # fmt: skip
    assert run_json(env, "show", south["id"])["state"] == "cancelled"
    run_json(env, *booking("40G"), expect=1)  # both routes are still full
    reserved = run_json(env, "list", "--state", "reserved")["reservations"]
    assert {r["id"] for r in reserved} == {north["id"], again["id"]}


def test_sigterm_stops_the_server_cleanly(server: Server) -> None:
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=15) == 0
    assert server.process.stdout is not None
    output = server.process.stdout.read()
    assert f"braid listening on {server.url}" in output and "braid stopped" in output


def test_the_client_follows_pages_and_stops_at_its_limit() -> None:
    """`braid list` (BraidClient.find) over a real service, 2 rows per page on the wire."""
    from braid.cli import client as client_module
    from braid.cli.client import BraidClient
    from tests.api.harness import body, build

    api = build()
    made = []
    for n in range(5):
        sent = body(bandwidth="1G", start=f"2030-01-01T01:00:0{n}Z")
        answer = api.client.post("/v1/reservations", json=sent, headers=api.auth("alice"))
        made.append(answer.json()["id"])
    transport = api.client._transport  # the in-process ASGI transport of the test client
    with BraidClient("http://testserver", api.tokens["alice"], transport=transport) as client:
        original, client_module.PAGE = client_module.PAGE, 2  # type: ignore[misc]
        try:
            assert [r["id"] for r in client.find()] == made
            assert [r["id"] for r in client.find(limit=3)] == made[:3]
            assert [r["id"] for r in client.find(limit=1, state="reserved")] == made[:1]
        finally:
            client_module.PAGE = original  # type: ignore[misc]


def test_operators_audit_take_a_link_out_and_see_the_network(server: Server) -> None:
    made = braid("token", "create", "--user", "olga", "--role", "operator",
                 "--database", server.database)  # fmt: skip
    env = clean_env(BRAID_URL=server.url, BRAID_TOKEN=made.stdout.strip())
    view = run_json(env, *booking("30G"))
    ask = ["--mode", "earliest", "--src", "ORNL", "--dst", "NERSC", "--bandwidth", "1G"]
    assert run_json(env, "availability", *ask, "--duration", "2h", "--not-before", "now+1h")
    audit = run_json(env, "audit", view["id"])["entries"]
    assert [e["action"] for e in audit] == ["created"]
    link = view["paths"][0]["links"][0]
    done = run_json(env, "maintenance", "--link", link, "--start", iso(0), "--end", iso(4))
    assert [r["id"] for r in done["rerouted"]] + [f["id"] for f in done["failed"]] == [view["id"]]
    shown = braid("maintenance", "--link", link.lower() + "x", "--start", iso(5), "--end",
                  iso(6), env=env)  # fmt: skip
    assert shown.returncode == 2 and "unknown link" in shown.stderr
    network = run_json(env, "network", "show")
    assert network["version"] == 1 and network["links"]


def test_a_booking_whose_answer_was_lost_is_sent_again_and_booked_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`braid reserve` (BraidClient.reserve) sends an Idempotency-Key and retries with it."""
    import httpx

    from braid.cli import client as client_module
    from braid.cli.client import BraidClient
    from tests.api.harness import body, build

    api = build()
    inner = api.client._transport  # the in-process ASGI transport of the test client
    sent: list[str] = []

    class LosesTheFirstAnswer(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            sent.append(request.headers.get("idempotency-key", ""))
            response: httpx.Response = inner.handle_request(request)  # the server does the work
            if len(sent) == 1:
                raise httpx.ReadTimeout("the answer was lost", request=request)
            return response

    monkeypatch.setattr(client_module, "RETRY_PAUSES", (0.0, 0.0))
    with BraidClient(
        "http://testserver", api.tokens["alice"], transport=LosesTheFirstAnswer()
    ) as c:
        booked = c.reserve(body(bandwidth="20G"))
    assert len(sent) == 2 and sent[0] == sent[1] and sent[0].startswith("braid-cli-")
    created = [e.reservation_id for e in api.repo.audit() if e.action == "created"]
    assert created == [booked["id"]]


def test_a_volume_is_reserved_shown_as_steps_and_refused_with_its_completion(
    client_env: dict[str, str],
) -> None:
    env = client_env
    ask = ["--src", "ORNL", "--dst", "NERSC", "--volume", "1TB", "--not-before", iso(1)]
    quickest = run_json(env, "availability", *ask)
    assert quickest["status"] == "answered" and quickest["completion"] == iso(1 + 89 / 3600)
    late = braid("reserve", *ask, "--deadline", iso(1 + 40 / 3600), env=env)
    assert late.returncode == 1, late.stderr
    assert "450 GB" in late.stderr and "--accept earliest_completion" in late.stderr
    view = run_json(env, "reserve", *ask, "--deadline", iso(1 + 40 / 3600),
                    "--accept", "earliest_completion")  # fmt: skip
    assert view["kind"] == "volume" and view["volume"]["completion"] == iso(1 + 89 / 3600)
    table = braid("show", view["id"], env=env)
    assert table.returncode == 0 and "profile" in table.stdout and "completion" in table.stdout
    bad = braid("reserve", *ask, "--objective", "flattest", env=env)
    assert bad.returncode == 2 and "deadline:" in bad.stderr
    spread = run_json(env, "modify", view["id"], "--objective", "flattest", "--deadline", iso(2))
    assert spread["volume"]["completion"] == iso(2) and spread["version"] == 2
    assert spread["volume"]["peak"] < view["volume"]["peak"]
