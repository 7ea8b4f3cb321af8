"""An optional dependency that is missing: a clear error naming the extra to install."""

from __future__ import annotations

import pytest
import typer

from braid.cli.common import require_module


def test_a_missing_optional_package_names_the_extra_to_install(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(typer.Exit) as stopped:
        require_module("braid_no_such_package", "plot", "--plot")
    assert stopped.value.exit_code == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "--plot needs the Python package 'braid_no_such_package'" in said
    assert "pip install 'braid[plot]'" in said


def test_an_installed_package_passes() -> None:
    require_module("json", "plot", "--plot")
