"""`braid emulate guarantees` without a network: the receiver's report, floors, the plot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from braid.adapters.emulation.iperf import IperfError
from braid.adapters.emulation.iperf_received import (
    ReceivedFlow,
    parse_received,
    received_argv,
)
from braid.core.errors import InputError
from braid.core.model.topology import topology_from_dict
from braid.emulation.experiments.guarantees import (
    BEST_EFFORT,
    RESERVATIONS,
    GuaranteeOptions,
    guarantees_topology,
    parse_policing_choice,
)
from braid.emulation.experiments.guarantees import _modes as modes_of
from braid.emulation.guarantee_floors import judge, link_goodput
from braid.emulation.guarantee_plots import plot_guarantees
from braid.emulation.report import Report
from tests.unit.figure_files import png_dpi


def _interval(end: float, bps: float, seconds: float = 1.0, omitted: bool = False) -> Any:
    return {"sum": {"end": end, "seconds": seconds, "bits_per_second": bps, "omitted": omitted}}


def test_the_receivers_seconds_are_read_leaving_out_warm_up_and_the_tail() -> None:
    report = {
        "end": {"sum_sent": {"bits_per_second": 60e6}},
        "server_output_json": {
            "intervals": [
                _interval(1.0, 55e6, omitted=True),
                _interval(1.0, 30e6),
                _interval(2.0, 29e6),
                _interval(2.05, 80e6, seconds=0.05),
            ]
        },
    }
    got = parse_received(json.dumps(report))
    assert got.interval_ends == (1.0, 2.0)
    assert got.interval_bps == (30e6, 29e6)
    assert got.mean_bps == pytest.approx(29.5e6)
    assert got.sent_bps == 60e6


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "did not print JSON"),
        (json.dumps({"error": "unable to connect"}), "unable to connect"),
        (json.dumps({"end": {}, "server_output_text": "x"}), "server_output_json"),
    ],
)
def test_a_report_without_the_receivers_view_is_an_error_saying_why(text: str, says: str) -> None:
    with pytest.raises(IperfError, match=says):
        parse_received(text)


def test_udp_flows_send_at_their_rate_and_tcp_flows_are_greedy() -> None:
    udp = received_argv("10.0.0.2", ReceivedFlow(5, 5301, udp=True, rate_bps=60_000_000))
    assert "--get-server-output" in udp and udp[udp.index("-b") + 1] == "60000000"
    assert "-u" in udp
    tcp = received_argv("10.0.0.2", ReceivedFlow(5, 5303))
    assert "-u" not in tcp and "-b" not in tcp
    with pytest.raises(IperfError, match="rate_bps"):
        ReceivedFlow(5, 5301, udp=True)


def test_the_policing_choice_is_checked_by_name() -> None:
    assert parse_policing_choice("hard") == "hard"
    with pytest.raises(InputError, match="policing"):
        parse_policing_choice("strict")


def test_the_baseline_runs_first_and_none_runs_only_it() -> None:
    assert [m for m, _ in modes_of(GuaranteeOptions())] == ["enforcement off", "enforced"]
    assert modes_of(GuaranteeOptions(policing="none")) == [("enforcement off", "none")]
    assert [m for m, _ in modes_of(GuaranteeOptions(baseline=False))] == ["enforced"]


def test_the_topology_has_one_core_link_with_a_50_ms_round_trip() -> None:
    topology = topology_from_dict(guarantees_topology(100_000_000))
    (link,) = topology.links.values()
    assert 2 * link.latency_ms == 50
    assert {r.sender for r in (*RESERVATIONS, *BEST_EFFORT)}.isdisjoint(
        {r.receiver for r in (*RESERVATIONS, *BEST_EFFORT)}
    )


def _row(mode: str, phase: str, flow: str, policing: str, booked: float | None, got: float) -> Any:
    return {
        "mode": mode,
        "phase": phase,
        "flow": flow,
        "policing": policing,
        "booked_mbps": booked,
        "sent_mbps": 2 * (booked or 50),
        "delivered_mbps": got,
        "percent_of_booked": 100 * got / booked if booked else None,
    }


def _report(mode: str, hard: float, tcp: float, best: float) -> Report:
    report = Report("guarantees", [], [])
    report.rows = [
        _row(mode, "together", "hard over-sender", "hard", 30, hard),
        _row(mode, "together", "soft over-sender", "soft", 20, 19.9),
        _row(mode, "together", "TCP in reservation", "hard", 40, tcp),
        _row(mode, "together", "best-effort flood", "best effort", None, best),
        _row(mode, "reservations idle", "best-effort flood", "best effort", None, 99.0),
    ]
    return report


def test_the_enforced_run_is_held_to_the_issues_floors() -> None:
    report = _report("enforced", hard=29.8, tcp=37.0, best=12.6)
    judge(report, 100_000_000, 9000)
    assert report.passed, [f.line() for f in report.floors if not f.passed]
    names = " ".join(f.name for f in report.floors)
    assert "at most its booking" in names and "taken from the other reservations" in names
    assert "reservations idle" in names


def test_a_hard_over_sender_above_its_booking_fails_and_so_do_starved_neighbours() -> None:
    report = _report("enforced", hard=45.0, tcp=30.0, best=0.5)
    judge(report, 100_000_000, 9000)
    failed = {f.name.split(":")[0] for f in report.floors if not f.passed}
    assert "hard over-sender (hard)" in failed
    assert "TCP in reservation (hard)" in failed
    assert "best effort, reservations busy" in failed
    # The soft one kept to its booking: whatever the others lost, it did not take it.
    assert "soft over-sender (soft)" not in failed


def test_a_soft_over_sender_above_its_booking_while_another_is_short_took_from_it() -> None:
    report = _report("enforced", hard=25.0, tcp=39.0, best=0.5)
    soft = next(r for r in report.rows if r["flow"] == "soft over-sender")
    soft["delivered_mbps"] = 26.0
    judge(report, 100_000_000, 9000)
    taken = next(f for f in report.floors if "taken from" in f.name)
    assert not taken.passed and taken.value == pytest.approx(30 * 0.98 - 25.0)


def test_the_run_with_enforcement_off_is_compared_with_not_judged() -> None:
    report = _report("enforcement off", hard=58.0, tcp=3.0, best=30.0)
    judge(report, 100_000_000, 9000)
    assert report.floors == [] and report.passed
    assert report.findings


def test_the_links_goodput_leaves_out_the_frame_headers() -> None:
    assert 99e6 < link_goodput(100_000_000, 9000) < 100e6


def test_the_plot_is_a_300_dpi_png_and_an_svg(tmp_path: Path) -> None:
    report = Report("guarantees", [], [])
    flows = {
        name: {"together": {"t": [1.0, 2.0], "mbps": [30.0, 29.0]},
               "idle": {"t": [8.0, 9.0], "mbps": [90.0, 95.0]}}
        for name in ("hard over-sender", "best-effort flood")
    }  # fmt: skip
    for mode in ("enforcement off", "enforced"):
        report.series.setdefault("rates", {})[mode] = {
            "booked_mbps": {"hard over-sender": 30.0},
            "link_mbps": 100.0,
            "idle_from_s": 7.0,
            "flows": flows,
        }
    written = plot_guarantees(report, tmp_path)
    assert [p.name for p in written] == ["guarantees.png", "guarantees.svg"]
    assert png_dpi(tmp_path / "guarantees.png") == pytest.approx(300, abs=0.5)
    assert (tmp_path / "guarantees.svg").read_text().lstrip().startswith("<?xml")
    assert plot_guarantees(Report("guarantees", [], []), tmp_path) == []
