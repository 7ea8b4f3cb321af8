"""The pure parts of `braid emulate packet-split`'s Figures 4, 5 and fairness (no root)."""

from __future__ import annotations

import json

import pytest

from braid.adapters.emulation.iperf import ClientOptions, client_argv, combine, parse_report
from braid.emulation.experiments.packet_split import PARTS, PacketSplitOptions
from braid.emulation.experiments.split_congestion import CongestionTimes, busiest_cwnd
from braid.emulation.experiments.split_fairness import fairness_of
from braid.emulation.split_lab import Case, second_delay

SS = """\
ESTAB 0 0 10.0.0.1:40000 10.0.0.2:5201
\t cubic wscale:9,9 rto:300 cwnd:10 bytes_acked:150 segs_out:8
ESTAB 0 0 10.0.0.1:40002 10.0.0.2:5201
\t cubic wscale:9,9 rto:400 cwnd:47 ssthresh:20 bytes_acked:9000000 segs_out:900
"""


def _streams_report(per_interval: list[list[float]]) -> str:
    intervals = [
        {
            "streams": [{"bits_per_second": b} for b in rates],
            "sum": {"end": float(i + 1), "bits_per_second": sum(rates), "omitted": False},
        }
        for i, rates in enumerate(per_interval)
    ]
    end = {"sum_received": {"bits_per_second": 1e6, "seconds": 2.0}, "streams": []}
    return json.dumps({"intervals": intervals, "end": end})


def test_the_busiest_connections_window_is_the_transfers() -> None:
    assert busiest_cwnd(SS) == 47
    assert busiest_cwnd("") is None


def test_jain_per_interval_from_each_streams_rate() -> None:
    result = parse_report(_streams_report([[5e6, 5e6], [9e6, 1e6]]))
    assert result.interval_stream_bps == ((5e6, 5e6), (9e6, 1e6))
    assert fairness_of(result) == [1.0, pytest.approx(100 / 164, abs=1e-4)]
    both = combine([result, result])
    assert both.interval_stream_bps[0] == (5e6, 5e6, 5e6, 5e6)


def test_a_launcher_wraps_iperf3_and_leaves_its_arguments_alone() -> None:
    plain = ClientOptions(5.0)
    mptcp = ClientOptions(5.0, launcher=("mptcpize", "run"))
    assert client_argv("10.0.0.2", mptcp) == client_argv("10.0.0.2", plain)
    assert mptcp.launcher == ("mptcpize", "run")


def test_parts_are_checked_and_the_short_mode_includes_figure_4() -> None:
    assert "fig4" in PacketSplitOptions.short().parts
    assert set(PacketSplitOptions().parts) == set(PARTS)
    with pytest.raises(ValueError, match="parts: fig9"):
        PacketSplitOptions(parts=("fig9",))
    with pytest.raises(ValueError, match="t1"):
        CongestionTimes(10.0, 12.0)


def test_figure_5s_delays_give_the_papers_mdis() -> None:
    assert [Case((1, 1), (25.0, d)).mdi for d in (25.0, 50.0, 100.0)] == [0.0, 0.167, 0.3]
    assert second_delay(0.3, 25.0) == 100.0
