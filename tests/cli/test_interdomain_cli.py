"""`braid interdomain reserve | show | list | cancel | modify` against a real server (Fig. 6a)."""

from __future__ import annotations

import json
import threading
import time
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

# The harness imports Starlette's TestClient, which warns about its HTTP package; not ours.
warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")

import pytest  # noqa: E402
import uvicorn  # noqa: E402
from typer.testing import CliRunner, Result  # noqa: E402

from braid.adapters.api.interdomain import mount_interdomain  # noqa: E402
from braid.adapters.free_ports import free_port  # noqa: E402
from braid.bootstrap.local_cluster import LocalCluster  # noqa: E402
from braid.bootstrap.orchestrator import open_interdomain  # noqa: E402
from braid.cli.interdomain_cmd import app  # noqa: E402
from tests.api.harness import Api, build  # noqa: E402

pytestmark = pytest.mark.slow

FIG6A = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "fig6a.yaml"
BASE = (int(time.time()) // 86400 + 40) * 86400


def iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Api]]:
    """The API with the interdomain routes on a real port, the Fig. 6a agents behind it."""
    workdir = tmp_path_factory.mktemp("fig6a-cli")
    with LocalCluster(FIG6A, workdir / "run") as cluster:
        service = open_interdomain(
            cluster.file, workdir / "negotiation.db", token=cluster.peer_token
        )
        api = build()
        mount_interdomain(api.app, service)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(api.app, port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started and thread.is_alive():
            time.sleep(0.05)
        try:
            yield f"http://127.0.0.1:{port}", api
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            service.close()


def run(served: tuple[str, Api], who: str, *args: str) -> Result:
    url, api = served
    return CliRunner().invoke(app, [*args, "--url", url, "--token", api.tokens[who]])


def test_reserve_show_and_list(served: tuple[str, Api]) -> None:
    made = run(
        served, "alice", "reserve", "--src", "site-a:a-dtn", "--dst", "site-c:c-dtn",
        "--bandwidth", "12G", "--start", iso(BASE), "--end", iso(BASE + 3600), "--json",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    view = json.loads(made.output)
    assert view["status"] == "committed" and view["bandwidth"] == 12000
    shown = run(served, "alice", "show", view["id"])
    assert shown.exit_code == 0, shown.output
    assert "committed" in shown.output and "re1" in shown.output and "re2" in shown.output
    listed = run(served, "alice", "list")
    assert listed.exit_code == 0 and view["id"] in listed.output
    assert view["id"] not in run(served, "bob", "list").output
    assert run(served, "bob", "cancel", view["id"]).exit_code == 1  # not bob's
    cancelled = run(served, "alice", "cancel", view["id"])
    assert cancelled.exit_code == 0, cancelled.output
    assert "cancelled" in cancelled.output and "re1 released" in cancelled.output
    again = run(served, "alice", "cancel", view["id"], "--json")
    assert again.exit_code == 0 and json.loads(again.output)["status"] == "cancelled"


def test_a_refusal_and_bad_input_exit_non_zero_with_the_reason(served: tuple[str, Api]) -> None:
    window = ["--start", iso(BASE + 86400), "--end", iso(BASE + 90000)]
    ends = ["--src", "site-a:a-dtn", "--dst", "site-c:c-dtn"]
    refused = run(served, "bob", "reserve", *ends, "--bandwidth", "30G", *window)
    assert refused.exit_code == 1 and "rejected" in refused.output
    bad = run(served, "bob", "reserve", *ends, "--bandwidth", "1G", *window, "--max-paths", "9")
    assert bad.exit_code == 2 and "max_paths" in bad.output
    unknown = run(served, "bob", "show", "x-nosuch")
    assert unknown.exit_code == 1 and "no multi-domain reservation" in unknown.output


def test_modify_changes_it_or_says_why_not(served: tuple[str, Api]) -> None:
    window = ["--start", iso(BASE + 2 * 86400), "--end", iso(BASE + 2 * 86400 + 3600)]
    ends = ["--src", "site-a:a-dtn", "--dst", "site-c:c-dtn"]
    made = run(served, "alice", "reserve", *ends, "--bandwidth", "4G", *window, "--json")
    assert made.exit_code == 0, made.output
    first = json.loads(made.output)
    assert run(served, "bob", "modify", first["id"], "--bandwidth", "5G").exit_code == 1
    changed = run(
        served, "alice", "modify", first["id"], "--bandwidth", "12G",
        "--end", iso(BASE + 2 * 86400 + 7200), "--json",
    )  # fmt: skip
    assert changed.exit_code == 0, changed.output
    view = json.loads(changed.output)
    assert view["bandwidth"] == 12000 and view["end"] == iso(BASE + 2 * 86400 + 7200)
    assert view["transaction"] != first["transaction"] and view["status"] == "committed"
    too_big = run(served, "alice", "modify", first["id"], "--bandwidth", "21G")
    assert too_big.exit_code == 1 and "rejected" in too_big.output  # over both 10G cores
    nothing = run(served, "alice", "modify", first["id"])
    assert nothing.exit_code == 2 and "nothing to change" in nothing.output
    shown = json.loads(run(served, "alice", "show", first["id"], "--json").output)
    assert shown["transaction"] == view["transaction"] and shown["bandwidth"] == 12000


def test_a_volume_by_a_deadline_shows_its_profile(served: tuple[str, Api]) -> None:
    start = BASE + 5 * 86400
    made = run(
        served, "alice", "reserve", "--src", "site-a:a-dtn", "--dst", "site-c:c-dtn",
        "--volume", "900GB", "--not-before", iso(start), "--deadline", iso(start + 3600),
        "--policing", "hard",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert "policing" in made.output and "hard" in made.output
    # 20G over the two WANs: 7.2 Tbit in 360 s.
    assert "profile" in made.output and "completion" in made.output
    assert iso(start + 360).removesuffix("Z") in made.output
    both = run(
        served, "alice", "reserve", "--src", "site-a:a-dtn", "--dst", "site-c:c-dtn",
        "--volume", "1TB", "--bandwidth", "1G", "--deadline", iso(start + 3600),
    )  # fmt: skip
    assert both.exit_code == 2 and "bandwidth" in both.output


def test_modify_gives_a_volume_a_new_volume_and_deadline(served: tuple[str, Api]) -> None:
    start = BASE + 6 * 86400
    made = run(
        served, "alice", "reserve", "--src", "site-a:a-dtn", "--dst", "site-c:c-dtn",
        "--volume", "900GB", "--not-before", iso(start), "--deadline", iso(start + 3600), "--json",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    first = json.loads(made.output)
    # 1.8 TB = 14.4 Tbit at 20G: 720 s, by a deadline of 1000 s.
    changed = run(
        served, "alice", "modify", first["id"], "--volume", "1.8TB",
        "--deadline", iso(start + 1000), "--json",
    )  # fmt: skip
    assert changed.exit_code == 0, changed.output
    view = json.loads(changed.output)
    assert view["volume_bytes"] == 18 * 10**11 and view["deadline"] == iso(start + 1000)
    assert view["completion"] == iso(start + 720) and view["transaction"] != first["transaction"]
    window = run(served, "alice", "modify", first["id"], "--bandwidth", "1G")
    assert window.exit_code == 2 and "bandwidth" in window.output
    too_big = run(served, "alice", "modify", first["id"], "--volume", "10TB")
    assert too_big.exit_code == 1 and "rejected" in too_big.output
