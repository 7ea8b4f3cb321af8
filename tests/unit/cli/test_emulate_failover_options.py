"""`braid emulate failover` refuses what cannot run before anything starts, naming the option."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from braid.cli.emulate_cmd import app
from braid.emulation.experiments import failover


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--methods", "ff-bfd", "--degradations", "path-switch"], "--methods"),
        (["--methods", "ff,ff-bfd", "--degradations", "cut", "--bfd-interval", "0"],
         "--bfd-interval"),
        (["--methods", "ff-bfd", "--degradations", "cut", "--bfd-interval", "70000"],
         "--bfd-interval"),
        (["--methods", "bfd"], "--methods"),
        (["--degradations", "cutt"], "--degradations"),
    ],
)  # fmt: skip
def test_bad_options_are_refused_naming_the_option(
    argv: list[str], named: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def must_not_run(*_: object) -> None:
        pytest.fail("the experiment started")

    monkeypatch.setattr(failover, "run_failover", must_not_run)
    result = CliRunner().invoke(app, ["failover", "--short", *argv])
    assert result.exit_code == 2, result.output
    assert named in result.output
