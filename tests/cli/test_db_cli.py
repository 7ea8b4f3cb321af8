"""`braid db upgrade | backup | restore` as an operator types them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BRAID = str(Path(sys.executable).parent / "braid")


def _braid(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BRAID, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env={"COLUMNS": "200"}
    )


def test_upgrade_backup_and_restore_round_trip(tmp_path: Path) -> None:
    first = _braid("db", "upgrade", "--database", "sqlite:///a.db", cwd=tmp_path)
    assert first.returncode == 0 and "schema none ->" in first.stdout
    again = _braid("db", "upgrade", "--database", "sqlite:///a.db", cwd=tmp_path)
    assert "nothing to do" in again.stdout
    token = _braid(
        "token", "create", "--user", "alice", "--database", "sqlite:///a.db", cwd=tmp_path
    )
    assert token.returncode == 0
    saved = _braid("db", "backup", "a.backup", "--database", "sqlite:///a.db", cwd=tmp_path)
    assert saved.returncode == 0 and "written to a.backup" in saved.stdout
    loaded = _braid("db", "restore", "a.backup", "--database", "sqlite:///b.db", cwd=tmp_path)
    assert loaded.returncode == 0 and "restored from a.backup" in loaded.stdout
    refused = _braid("db", "restore", "a.backup", "--database", "sqlite:///b.db", cwd=tmp_path)
    assert refused.returncode == 2 and "--replace" in refused.stderr


def test_errors_say_what_is_wrong(tmp_path: Path) -> None:
    missing = _braid("db", "restore", "none.backup", "--database", "sqlite:///b.db", cwd=tmp_path)
    assert missing.returncode == 2 and "no backup file none.backup" in missing.stderr
    url = "postgresql+psycopg://nobody@127.0.0.1:1/braid"
    down = _braid("db", "backup", "x.backup", "--database", url, cwd=tmp_path)
    assert down.returncode == 2 and "connection" in down.stderr.lower()
    assert not (tmp_path / "x.backup").exists()
