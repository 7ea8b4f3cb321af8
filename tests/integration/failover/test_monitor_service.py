"""`braid monitor --action service`: a monitor that loses its far end tells `braid serve`.

Real processes: a `braid serve` on SQLite with a protected reservation, a
`braid monitor` probing a UDP echo that goes silent. The monitor's fail-over
posts the watched link down with its monitor token, and the service moves
the reservation to its standby (audited as the monitor's doing).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from braid.adapters.failover.probe import UdpEcho
from tests.integration.test_replicas import BASE, braid, clean_env, iso, launch, stop, wait_ready

RING = {
    "nodes": [{"id": n} for n in ("A", "B", "M")],
    "links": [
        {"id": "A-B", "a": "A", "b": "B", "capacity": "10M", "latency_ms": 5},
        {"id": "A-M", "a": "A", "b": "M", "capacity": "10M", "latency_ms": 8},
        {"id": "M-B", "a": "M", "b": "B", "capacity": "10M", "latency_ms": 8},
    ],
}


def udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answered(log: Path) -> bool:
    """Whether the monitor's log holds a probe that was answered."""
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return False
    records = [json.loads(line) for line in lines if line.endswith("}")]
    return any(
        r["kind"] == "probe" and r.get("rtt_ms") is not None and not r.get("late") for r in records
    )


def test_a_monitor_losing_its_far_end_fails_the_service_over(tmp_path: Path) -> None:
    log = tmp_path / "monitor.jsonl"
    database = f"sqlite:///{tmp_path / 'braid.db'}"
    topology = tmp_path / "ring.yaml"
    topology.write_text(yaml.safe_dump(RING))
    server = launch(database, topology, tmp_path / "serve.log")
    try:
        user = braid("token", "create", "--user", "alice", "--database", database)
        watcher = braid("token", "create", "--user", "mon-a", "--role", "monitor",
                        "--database", database)  # fmt: skip
        wait_ready(server)
        sent = {"src": "A", "dst": "B", "bandwidth": 5, "protect": True,
                "start": iso(BASE), "end": iso(BASE + 3600)}  # fmt: skip
        booked = httpx.post(server.url + "/v1/reservations", json=sent,
                            headers={"Authorization": f"Bearer {user}"}, timeout=30)  # fmt: skip
        assert booked.status_code == 201, booked.text
        assert booked.json()["paths"][0]["links"] == ["A-B"]
        port = udp_port()
        echo = UdpEcho(port, address="127.0.0.1")
        command = [
            sys.executable, "-m", "braid.cli.main", "monitor", "--target", "127.0.0.1",
            "--port", str(port), "--rate", "20", "--timeout", "0.2", "--rtt-samples", "3",
            "--rtt-threshold", "150",
            "--duration", "4", "--action", "service", "--service", server.url,
            "--link", "A-B", "--log", str(log),
        ]  # fmt: skip
        env = {**clean_env(), "BRAID_TOKEN": watcher}
        monitor = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=env)  # fmt: skip
        # Once it has had an answer (its start-up takes seconds on a loaded host; a far end
        # silent from the start is "target lost", which by design moves nothing) ...
        deadline = time.monotonic() + 60
        while not _answered(log) and monitor.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        echo.close()  # ... the far end goes quiet: the monitor fails over
        out, err = monitor.communicate(timeout=60)
        assert monitor.returncode == 0, err
        assert "switched to standby" in err and "actions 0" not in out, out + err
        rid = booked.json()["id"]
        alice = {"Authorization": f"Bearer {user}"}
        seen = httpx.get(f"{server.url}/v1/reservations/{rid}", headers=alice, timeout=30).json()
        assert seen["protection"]["on"] == "standby"
        assert seen["paths"][0]["links"] == ["A-M", "M-B"]
        path = f"{server.url}/v1/reservations/{rid}/audit"
        audit = httpx.get(path, headers=alice, timeout=30).json()
        # A second action (the monitor retries while still degraded) finds it down already.
        moves = [(e["action"], e["actor"]) for e in audit["entries"]]
        assert moves == [("created", "alice"), ("failover", "mon-a")]
    finally:
        stop([server])


def test_the_service_action_names_what_it_misses(tmp_path: Path) -> None:
    cases = [
        ([], "--service"),
        (["--service", "http://127.0.0.1:9"], "--token"),
        (["--service", "http://127.0.0.1:9", "--token", "t"], "--link"),
    ]
    for args, needle in cases:
        done = subprocess.run(
            [sys.executable, "-m", "braid.cli.main", "monitor", "--target", "127.0.0.1",
             "--action", "service", *args],
            capture_output=True, text=True, timeout=60, check=False, env=clean_env(),
        )  # fmt: skip
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert needle in " ".join(done.stderr.split()), (args, done.stderr)
