"""`braid emulate check` names a missing braid-dp and how to build it (no root needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from braid.adapters.emulation.prereqs import missing_prerequisites


def test_a_missing_braid_dp_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BRAID_DP", str(tmp_path / "no-such-braid-dp"))
    found = [m for m in missing_prerequisites(need_root=False) if "braid-dp" in m.what]
    assert len(found) == 1
    assert "cargo build" in found[0].fix


def test_a_present_braid_dp_is_not(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    binary = tmp_path / "braid-dp"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("BRAID_DP", str(binary))
    assert not [m for m in missing_prerequisites(need_root=False) if "braid-dp" in m.what]
