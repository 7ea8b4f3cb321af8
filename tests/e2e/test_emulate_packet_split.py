"""`braid emulate packet-split --short`: seed 002 over braid's edges and link emulators (root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from braid.cli.emulate_cmd import app
from braid.emulation.experiments.packet_split import PacketSplitOptions, run_packet_split
from braid.emulation.packet_split_plots import plot_congestion, plot_packet_split
from braid.emulation.report import write_report
from braid.emulation.session import SessionOptions
from tests.e2e.emulation_fixtures import emulation_host

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
__all__ = ["emulation_host"]


@pytest.mark.usefixtures("emulation_host")
def test_short_run_splits_one_flow_over_both_paths_and_writes_its_results(
    tmp_path: Path,
) -> None:
    options = PacketSplitOptions.of(SessionOptions(), short=True)
    assert options.session.realtime
    report = run_packet_split(options)
    write_report(report, tmp_path, [plot_packet_split, plot_congestion])

    data = json.loads((tmp_path / "results.json").read_text())
    keys = {(r["part"], r["mode"]) for r in data["rows"]}
    assert keys == {
        ("Table II", "braid packet split"),
        ("Figure 3", "with resequencing"),
        ("Figure 3", "without resequencing"),
        ("Figure 4", "weights recomputed"),
    }
    for row in (r for r in data["rows"] if r["part"] != "Figure 4"):
        # One TCP flow got more than its fastest path can carry: both paths carried it
        # (how much more depends on the reordering and the machine's load).
        fastest = max(float(v) for v in str(row["paths_mbps"]).split("+"))
        assert row["goodput_mbps"] > fastest, row
        configured = max(float(v) for v in str(row["rtt_configured_ms"]).split("/"))
        assert row["rtt_measured_ms"] is not None
        assert row["rtt_measured_ms"] >= 0.4 * configured  # the probe alternates paths
    resequenced = next(r for r in data["rows"] if r["mode"] == "with resequencing")
    assert resequenced["resequence"] and resequenced["resequenced"] > 0
    assert data["floors"]
    # Figure 4: the flooded path's weight went to 0 after the flood began, at the sender's
    # edge, and the flow went on over the other path.
    congested = data["series"]["figure4"]["weights recomputed"]
    assert congested["errors"] == []
    assert congested["reweighed_at"] is not None and congested["reweighed_at"] > congested["t1"]
    flooded = congested["paths"].index("P")  # the paths in the reservation's order
    assert congested["weights"][flooded] == 0.0 and congested["weights"][1 - flooded] == 1.0
    assert congested["loss"][flooded] > 0.25
    assert congested["after"] > 2.0, congested
    assert congested["cwnd"], "the sender's congestion window was sampled"
    for name in ("packet-split", "packet-split-congestion"):
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (tmp_path / f"{name}.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.usefixtures("emulation_host")
def test_unknown_parts_are_refused_naming_the_choices() -> None:
    result = CliRunner().invoke(app, ["packet-split", "--parts", "table2,fig9"])
    assert result.exit_code == 2
    assert "fig9" in result.output and "fairness" in result.output
    assert "Traceback" not in result.output
