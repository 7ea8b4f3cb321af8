"""Another git revision's source, for benchmarks that compare it with this checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def baseline_source(revision: str, into: Path) -> Path:
    """The `src` folder of `revision`, unpacked from git into `into`."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "src"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"
