"""`braid emulate service`: the service's own provisioning on Mininet, with a 1 kHz probe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from braid.cli.emulate_cmd import app
from tests.e2e.emulation_fixtures import emulation_host

pytestmark = pytest.mark.e2e
__all__ = ["emulation_host"]


@pytest.mark.usefixtures("emulation_host")
def test_rules_come_at_the_start_swap_without_loss_and_go_on_cancel(tmp_path: Path) -> None:
    out = tmp_path / "service"
    result = CliRunner().invoke(app, ["service", "--short", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    row = json.loads((out / "results.json").read_text())["rows"][0]
    assert row["probe_before_lead"] == 0, row  # unreserved traffic does not pass
    assert row["first_probe_vs_start_s"] is not None and row["first_probe_vs_start_s"] < 1, row
    assert row["tcp_goodput_mbps"] >= 0.9 * row["reserved_mbps"], row
    assert row["paths_after_modify"] == 2, row  # the modify re-planned onto both paths
    assert row["probe_lost_in_swap"] == 0, row  # make-before-break, packet by packet
    assert row["probe_after_cancel"] == 0 and row["braid_entries_left"] == 0, row
