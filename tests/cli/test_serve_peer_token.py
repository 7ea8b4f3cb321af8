"""`braid serve --peer-token-file`: refused, naming the option, before anything starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BRAID = str(Path(sys.executable).parent / "braid")
FIG6A = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "fig6a.yaml"


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [BRAID, "serve", "--database", f"sqlite:///{tmp_path / 'braid.db'}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)


def test_a_peer_token_without_domains_is_refused(tmp_path: Path) -> None:
    (tmp_path / "orch.token").write_text("orchestrator-token-0123456789\n")
    done = _serve(tmp_path, "--peer-token-file", str(tmp_path / "orch.token"))
    assert done.returncode != 0
    assert "--peer-token-file: only with --domains" in done.stderr


def test_a_short_or_missing_token_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "short.token").write_text("short\n")
    for name, says in (("short.token", "at least 16 characters"), ("none.token", "cannot read")):
        done = _serve(
            tmp_path,
            *("--domains", str(FIG6A), "--negotiation-db", str(tmp_path / "n.db")),
            *("--peer-token-file", str(tmp_path / name)),
        )
        assert done.returncode != 0
        assert "--peer-token-file" in done.stderr and says in done.stderr, done.stderr
        assert not (tmp_path / "braid.db").exists()
