"""The monitor put together: real UDP probes and echo, the policy, an action, the log."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from braid.adapters.failover.actions import ActionOutcome
from braid.adapters.failover.probe import UdpEcho
from braid.adapters.failover.runner import MonitorConfig, run_monitor
from braid.adapters.free_ports import free_port
from braid.core.failover import DetectionRule


def test_a_far_end_that_goes_silent_fails_over_once_and_is_reported(tmp_path: Path) -> None:
    port = free_port(socket.SOCK_DGRAM)
    rule = DetectionRule(rtt_samples=3, recover_samples=3, hold_down_s=0.1, lost_after_s=0.6)
    config = MonitorConfig("127.0.0.1", port, rule, rate_hz=20, timeout=0.1, log=tmp_path / "log")
    switched: list[str] = []

    def action(to: str) -> ActionOutcome:
        switched.append(to)
        now = time.time()
        return ActionOutcome(to, now, now + 0.001, True)

    stop = threading.Event()
    said: list[str] = []
    runner = threading.Thread(target=lambda: run_monitor(config, action, stop, said.append))
    echo = UdpEcho(port, address="127.0.0.1")
    runner.start()
    time.sleep(0.8)
    echo.close()  # the far end goes quiet: lost probes, a fail-over, then "target lost"
    time.sleep(1.6)
    echo = UdpEcho(port, address="127.0.0.1")
    time.sleep(0.8)
    stop.set()
    runner.join()
    echo.close()
    assert switched == ["standby"]
    kinds = [json.loads(line)["kind"] for line in (tmp_path / "log").read_text().splitlines()]
    assert kinds[0] == "start" and kinds[-1] == "stop"
    order = [k for k in kinds if k not in ("probe", "start", "stop")]
    assert order == ["detect", "action", "target-lost", "target-back", "recovered"]
    assert any("still probing" in m for m in said)


def test_braid_monitor_serves_metrics_and_answers_probes(tmp_path: Path) -> None:
    echo_port = free_port(socket.SOCK_DGRAM)
    metrics_port = free_port(socket.SOCK_STREAM)
    (tmp_path / "metrics.token").write_text("scrape-token-1\n")
    command = [
        sys.executable, "-m", "braid.cli.main", "monitor", "--target", "127.0.0.1",
        "--port", str(echo_port), "--echo-port", str(echo_port), "--rate", "20",
        "--metrics-port", str(metrics_port), "--duration", "3", "--log", str(tmp_path / "log"),
        "--metrics-token-file", str(tmp_path / "metrics.token"),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    scraper = {"Authorization": "Bearer scrape-token-1"}
    try:
        body = ""
        for _ in range(40):
            time.sleep(0.1)
            try:
                body = httpx.get(url, headers=scraper).text
            except httpx.HTTPError:
                continue
            if 'braid_monitor_probes_total{result="answered"}' in body:
                break
        assert 'braid_monitor_probes_total{result="answered"}' in body
        assert "braid_monitor_rtt_ms" in body
        for headers in ({}, {"Authorization": "Bearer scrape-token-2"}):
            refused = httpx.get(url, headers=headers)
            assert refused.status_code == 401, refused.text
            assert "braid_monitor" not in refused.text
    finally:
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "detections 0" in out and "(lost 0)" in out


def test_bad_monitor_options_name_the_option(tmp_path: Path) -> None:
    from braid.adapters.failover.actions import write_path_rules
    from braid.core.rules.model import FlowRule, Match, Output, RuleSet

    rules = tmp_path / "rules.json"
    flow = FlowRule(3000, Match(in_port=1), (Output(2),), cookie=0xB7A1_0000_0000_0001)
    write_path_rules(rules, {"primary": RuleSet("s1", 1, (flow,)), "standby": RuleSet("s1", 1)})
    cases = [
        (["--metrics-port", "9"], "--metrics-token-file"),
        (["--rtt-threshold", "0"], "--rtt-threshold"),
        (["--action", "teleport"], "--action"),
        (["--action", "direct"], "--rules"),
        (["--action", "controller", "--rules", str(rules)], "--controller"),
        (["--action", "direct", "--rules", str(rules), "--paths", "primary,backup"], "backup"),
        (["--throughput-floor", "10M"], "--throughput-iface"),
    ]
    for args, needle in cases:
        done = subprocess.run(
            [sys.executable, "-m", "braid.cli.main", "monitor", "--target", "127.0.0.1", *args],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert needle in " ".join(done.stderr.split()), (args, done.stderr)
