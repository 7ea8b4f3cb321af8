"""`braid emulate guarantees --short` end to end (needs root): the report's shape, loose bounds.

The floors themselves (98 %, 102 %, 90 %) are the experiment's to measure and
print; here only what any working enforcement shows even on a busy host.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from braid.adapters.emulation.sendbuffer import current_settings, saved_settings
from braid.cli.emulate_cmd import app
from tests.e2e.emulation_fixtures import emulation_host

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
__all__ = ["emulation_host"]

FLOWS = {
    "hard over-sender",
    "soft over-sender",
    "TCP in reservation",
    "best-effort flood",
    "best-effort TCP",
}
MODES = ("enforcement off", "enforced")


def _row(rows: list[dict[str, Any]], mode: str, phase: str, flow: str) -> dict[str, Any]:
    (row,) = [r for r in rows if (r["mode"], r["phase"], r["flow"]) == (mode, phase, flow)]
    return row


@pytest.mark.usefixtures("emulation_host")
def test_guarantees_runs_short_with_its_baseline_and_writes_its_results(tmp_path: Path) -> None:
    out = tmp_path / "guarantees"
    host_settings = current_settings()
    result = CliRunner().invoke(app, ["guarantees", "--short", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    assert current_settings() == host_settings and saved_settings() is None

    data = json.loads((out / "results.json").read_text())
    rows = data["rows"]
    for mode in MODES:
        assert {r["flow"] for r in rows if r["mode"] == mode and r["phase"] == "together"} == FLOWS
        idle = {r["flow"] for r in rows if r["mode"] == mode and r["phase"] == "reservations idle"}
        assert idle == {"best-effort flood", "best-effort TCP"}
    assert data["floors"], "the enforced run checks no floor"
    assert all(r["seconds"] >= 2 for r in rows), "a flow reported fewer than two seconds"

    hard = _row(rows, "enforced", "together", "hard over-sender")
    assert hard["sent_mbps"] > 1.5 * hard["booked_mbps"]  # it over-sent
    assert 0.5 * hard["booked_mbps"] < hard["delivered_mbps"] <= 1.2 * hard["booked_mbps"]
    soft = _row(rows, "enforced", "together", "soft over-sender")
    assert soft["delivered_mbps"] > 0.5 * soft["booked_mbps"]
    idle_flood = _row(rows, "enforced", "reservations idle", "best-effort flood")
    assert idle_flood["delivered_mbps"] > 50  # of the 100 Mbit/s link: not starved

    assert (out / "results.md").read_text().startswith("# braid emulate guarantees")
    assert (out / "guarantees.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "guarantees.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.usefixtures("emulation_host")
def test_an_unknown_policing_is_an_error_naming_it() -> None:
    result = CliRunner().invoke(app, ["guarantees", "--short", "--policing", "strict"])
    assert result.exit_code != 0
    assert "policing" in result.output and "Traceback" not in result.output
