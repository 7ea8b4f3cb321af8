"""`--sync` of an agent (its hold store) and an orchestrator (its decision log): a level
SQLite is not asked for is refused naming the option, before any file is made."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from braid.cli.agent_cmd import app


@pytest.mark.parametrize("command", ["agent", "orchestrator"])
def test_an_unknown_level_is_refused_naming_the_option(command: str, tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    args = ["--store", str(store), "--sync", "sometimes"]
    if command == "agent":
        args += ["--topology", str(tmp_path / "none.yaml"), "--domain", "x"]
    result = CliRunner().invoke(app, [command, *args])
    assert result.exit_code != 0
    assert "--sync" in result.output and "'sometimes'" in result.output
    assert not store.exists()
