"""`braid demo` runs Fig. 6a end to end and leaves no process behind."""

from __future__ import annotations

import re

import pytest
import typer
from typer.testing import CliRunner

from braid.cli.demo_cmd import demo

pytestmark = pytest.mark.slow


def test_the_demo_negotiates_commits_refuses_and_cleans_up() -> None:
    app = typer.Typer()
    app.command()(demo)
    result = CliRunner().invoke(app, [])
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.count("=> COMMITTED") == 3 and out.count("=> FAILED") == 1
    assert "rn3: blind" in out and "[prep   ] rn3" in out  # the blind domain asked concretely
    assert "ledgers agree: 0 leaked, 0 overbooked" in out
    # the final plan's rules: an SDX bridging VLANs, an edge splitting over a weighted pool
    assert re.search(r"rules rn1-sdx \(rn1\): p\d/v\d+ -> p\d/v\d+", out)
    assert re.search(r"rules a-edge \(site-a\): p1/untagged -> \{p2/v\d+ w\d+, p2/v\d+ w\d+\}", out)
    assert "stopped 10 processes" in out and "still running" not in out
