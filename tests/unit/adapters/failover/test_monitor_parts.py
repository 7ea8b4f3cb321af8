"""The monitor's adapters: UDP probe and echo, interface counters, the site action, the log."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pytest

from braid.adapters.failover.actions import (
    SiteAction,
    extra_flows,
    read_path_rules,
    write_path_rules,
)
from braid.adapters.failover.counters import InterfaceRate
from braid.adapters.failover.eventlog import EventLog
from braid.adapters.failover.probe import ProbeResult, UdpEcho, UdpRttProbe
from braid.adapters.southbound.driver import SouthboundError
from braid.core.errors import InputError
from braid.core.rules.model import FlowRule, Match, Output, RuleSet
from braid.testing.fake_switch import FakeSwitch, Packet

COOKIE = 0xB7A1_0000_0000_0001


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _probe_for(
    seconds: float, port: int, timeout: float = 0.2, late_after: float | None = None
) -> list[ProbeResult]:
    results: list[ProbeResult] = []
    stop = threading.Event()
    probe = UdpRttProbe("127.0.0.1", port, rate_hz=50, timeout=timeout, late_after=late_after)
    thread = threading.Thread(target=probe.run, args=(results.append, stop))
    thread.start()
    time.sleep(seconds)
    stop.set()
    thread.join()
    return results


def test_probe_and_echo_on_loopback() -> None:
    with UdpEcho(0, address="127.0.0.1") as echo:
        results = _probe_for(0.5, echo.port)
    assert len(results) >= 10
    assert all(r.rtt_ms is not None and 0 <= r.rtt_ms < 100 for r in results)
    assert all(r.known >= r.sent for r in results)


def test_a_silent_target_gives_lost_probes_and_the_probe_goes_on() -> None:
    results = _probe_for(0.6, _free_udp_port(), timeout=0.1)
    assert len(results) >= 10
    assert all(r.rtt_ms is None for r in results)


def test_a_probe_unanswered_at_the_threshold_is_reported_late_once() -> None:
    results = _probe_for(0.6, _free_udp_port(), timeout=0.1, late_after=0.04)
    assert len(results) >= 10
    assert all(r.late and r.rtt_ms is not None and r.rtt_ms >= 40 for r in results)
    assert len({r.sent for r in results}) == len(results)


def test_interface_rate_from_byte_counters(tmp_path: Path) -> None:
    stats = tmp_path / "eth9" / "statistics"
    stats.mkdir(parents=True)
    ticks = iter([0.0, 2.0, 3.0])
    reader = InterfaceRate("eth9", "rx", root=tmp_path, clock=lambda: next(ticks))
    (stats / "rx_bytes").write_text("1000\n")
    assert reader.read() is None  # the first reading has nothing to compare with
    (stats / "rx_bytes").write_text("3000\n")
    assert reader.read() == 8000.0
    (stats / "rx_bytes").unlink()
    assert reader.read() is None
    with pytest.raises(ValueError, match="direction"):
        InterfaceRate("eth9", "up")


def _rules(port: int) -> RuleSet:
    entry = FlowRule(3000, Match(in_port=1), (Output(port),), cookie=COOKIE)
    return RuleSet("site-a", 1, (entry,))


class SwitchDriver:
    """A driver that programs one fake switch (and can be told to fail)."""

    def __init__(self) -> None:
        self.switch = FakeSwitch("site-a", 1)
        self.failing: str | None = None

    def apply(self, rule_set: RuleSet) -> None:
        if self.failing is not None:
            raise SouthboundError(rule_set.switch, self.failing)
        self.switch.apply(rule_set)

    def remove(self, rule_set: RuleSet) -> None:
        self.switch.remove(rule_set)

    def dump(self) -> dict[str, RuleSet]:
        return {"site-a": self.switch.dump()}

    def reconcile(self) -> dict[str, object]:
        return {}


def test_the_action_moves_the_switch_to_the_path_asked_for() -> None:
    driver = SwitchDriver()
    action = SiteAction(driver, {"primary": _rules(2), "standby": _rules(3)}, extra=10)  # type: ignore[arg-type]
    assert action("standby").ok
    out = driver.switch.process(Packet(in_port=1, eth_type=0x0800))
    assert [port for port, _ in out] == [3]
    assert len(driver.switch.dump().flows) == 11  # the entry and ten extra
    outcome = action("primary")
    assert outcome.ok and outcome.done >= outcome.began
    assert [p for p, _ in driver.switch.process(Packet(in_port=1, eth_type=0x0800))] == [2]
    assert not action("elsewhere").ok
    driver.failing = "connection refused"
    failed = action("standby")
    assert not failed.ok and failed.error is not None and "refused" in failed.error


def test_an_action_acts_on_one_switch_only() -> None:
    other = RuleSet("site-b", 2, _rules(2).flows)
    with pytest.raises(InputError, match="one site, one switch"):
        SiteAction(SwitchDriver(), {"primary": _rules(2), "standby": other})  # type: ignore[arg-type]


def test_extra_flows_are_distinct_and_change_each_round() -> None:
    one, two = extra_flows(100, COOKIE, 1), extra_flows(100, COOKIE, 2)
    assert len({f.match for f in one}) == 100
    assert not {f.match for f in one} & {f.match for f in two}
    assert all(f.actions == () and f.priority < 1000 for f in one)


def test_path_rules_round_trip_and_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    write_path_rules(path, {"primary": _rules(2), "standby": _rules(3)})
    assert read_path_rules(path) == {"primary": _rules(2), "standby": _rules(3)}
    path.write_text('{"paths": {"primary": {}}}')
    with pytest.raises(InputError, match="at least two"):
        read_path_rules(path)
    with pytest.raises(InputError, match="cannot read"):
        read_path_rules(tmp_path / "missing.json")


def test_the_event_log_is_json_lines_and_can_leave_probes_out(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "log", probes=False)
    log.write(1.5, "probe", rtt_ms=2)
    log.write(2.0, "detect", reason="rtt", value=70.0)
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "log").read_text().splitlines()]
    assert lines == [{"t": 2.0, "kind": "detect", "reason": "rtt", "value": 70.0}]
