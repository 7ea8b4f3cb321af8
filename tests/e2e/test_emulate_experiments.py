"""The three `braid emulate` experiments run end to end in --short mode (needs root)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from braid.adapters.emulation.sendbuffer import current_settings, saved_settings
from braid.cli.emulate_cmd import app
from tests.e2e.emulation_fixtures import emulation_host

pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
__all__ = ["emulation_host"]

PLOTS = {
    "sdx-split": ["sdx-split.png"],
    "multipath": ["multipath.png"],
    "tenants": ["tenants.png", "tenants-timeline.png"],
}
# What each short run measures: the configurations that must each appear once.
EXPECTED_ROWS: dict[str, set[tuple[str, object]]] = {
    "sdx-split": {("1 tunnel", 1), ("1 tunnel", 2), ("SS1", 1), ("SS1", 2), ("SS3", 1),
                  ("SS3", 2), ("SS5", 1), ("SS5", 2)},
    "multipath": {("multipath", 8), ("best single path", 8)},
    "tenants": {("shared main path", "T1"), ("shared main path", "T2"), ("braid", "T1"),
                ("braid", "T2")},
}  # fmt: skip


def _row_key(experiment: str, row: dict[str, object]) -> tuple[object, object]:
    if experiment == "sdx-split":
        return (row["config"], row["streams_per_tunnel"])
    if experiment == "multipath":
        return (row["mode"], row["flows"])
    return (row["mode"], row["tenant"])


@pytest.mark.usefixtures("emulation_host")
@pytest.mark.parametrize("experiment", ["sdx-split", "multipath", "tenants"])
def test_experiment_runs_short_and_writes_its_results(experiment: str, tmp_path: Path) -> None:
    out = tmp_path / experiment
    host_settings = current_settings()
    result = CliRunner().invoke(app, [experiment, "--short", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    # The session raised the host's default send buffer for Open vSwitch, and put it back.
    assert current_settings() == host_settings
    assert saved_settings() is None

    data = json.loads((out / "results.json").read_text())
    keys = [_row_key(experiment, row) for row in data["rows"]]
    assert sorted(keys, key=repr) == sorted(EXPECTED_ROWS[experiment], key=repr)
    # Every run moved real TCP data through the rules braid installed.
    assert all(row["goodput_mbps"] > 0 for row in data["rows"])
    assert data["floors"], "the short run checks no floor"
    buffer_notes = [note for note in data["notes"] if "send buffer: " in note]
    assert buffer_notes and "less than" not in buffer_notes[0], data["notes"]
    assert (out / "results.md").read_text().startswith(f"# braid emulate {experiment}")
    for plot in PLOTS[experiment]:
        assert (out / plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / plot).with_suffix(".pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.usefixtures("emulation_host")
def test_a_bad_option_value_is_an_error_naming_it_not_a_traceback() -> None:
    result = CliRunner().invoke(app, ["tenants", "--short", "--scale", "-1"])
    assert result.exit_code == 2
    assert "scale" in result.output and "Traceback" not in result.output
