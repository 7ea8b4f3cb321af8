"""Where the `braid-dp` binary is: `$BRAID_DP`, the repository's release build, or PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Final

__all__ = ["BRAID_DP_ENV", "BraidDpMissingError", "find_braid_dp", "repository_build"]

BRAID_DP_ENV: Final = "BRAID_DP"


class BraidDpMissingError(FileNotFoundError):
    """`braid-dp` is not built or not where `$BRAID_DP` says."""


def repository_build() -> Path:
    """The release build inside a source checkout (src/braid/adapters/dataplane → repo root)."""
    return Path(__file__).resolve().parents[4] / "dataplane" / "target" / "release" / "braid-dp"


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_braid_dp(environ: dict[str, str] | None = None) -> Path:
    """The binary to run, or `BraidDpMissingError` saying how to build it."""
    env = os.environ if environ is None else environ
    configured = env.get(BRAID_DP_ENV)
    if configured:
        path = Path(configured)
        if _is_executable(path):
            return path
        raise BraidDpMissingError(f"{BRAID_DP_ENV}={configured} is not an executable file")
    build = repository_build()
    if _is_executable(build):
        return build
    on_path = shutil.which("braid-dp")
    if on_path:
        return Path(on_path)
    raise BraidDpMissingError(
        "braid-dp is not built: run `make .venv/.installed` (the set-up step of `make demo` "
        "and `make test`) or `cargo build --release` in dataplane/, "
        f"or set {BRAID_DP_ENV} to the binary"
    )
