"""The layer contracts hold, and they would catch an app module importing an adapter."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT = str(Path(sys.executable).with_name("lint-imports"))


def _lint(pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [LINT, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def test_the_tree_keeps_every_contract() -> None:
    done = _lint()
    assert done.returncode == 0, done.stdout[-3000:]


def test_an_app_module_importing_an_adapter_breaks_the_layers(tmp_path: Path) -> None:
    copy = tmp_path / "braid"
    shutil.copytree(ROOT / "src" / "braid", copy, ignore=shutil.ignore_patterns("__pycache__"))
    errors = copy / "app" / "errors.py"
    errors.write_text(errors.read_text() + "\nimport braid.adapters.store  # noqa\n")
    done = _lint(tmp_path)
    assert done.returncode != 0
    assert "braid.app is not allowed to import braid.adapters" in done.stdout
    assert "braid.app.errors -> braid.adapters.store" in done.stdout
