"""`braid emulate service-failover`: a protected reservation on its standby within 1 s."""

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
def test_a_cut_primary_posted_down_puts_the_traffic_on_the_standby(tmp_path: Path) -> None:
    out = tmp_path / "service-failover"
    result = CliRunner().invoke(app, ["service-failover", "--short", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    row = json.loads((out / "results.json").read_text())["rows"][0]
    assert row["moves_down"] == ["failover"] and row["moves_up"] == ["failback"], row
    assert row["on_standby_after_down"] is True, row
    # The cut link is not s1's first hop: nothing reaches h2 until the service moves it.
    assert row["probe_lost_cut_to_post"] > 0, row
    assert row["probe_back_after_post_s"] <= 1.0, row  # the floor
    assert row["standby_link_bytes_while_down"] > 0, row
