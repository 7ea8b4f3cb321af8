"""`braid agent` and `braid orchestrator` start only with credentials for their callers,
or with an explicit `--insecure`, which warns at every start; `braid token peer-file`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from braid.cli.agent_cmd import app
from braid.cli.main import app as braid

FIG6A = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "fig6a.yaml"
WHAT = {
    "agent": "--peer-token-file FILE, --policy FILE or --tls-cert/--tls-key/--tls-ca",
    "orchestrator": "--database URL (its braid tokens) or --tls-cert/--tls-key/--tls-ca",
}


def _args(command: str, tmp_path: Path) -> list[str]:
    args = [command, "--store", str(tmp_path / "store.db")]
    if command == "agent":
        args += ["--topology", str(FIG6A), "--domain", "rn1", "--listen", "127.0.0.1:0"]
    return args


@pytest.mark.parametrize("command", ["agent", "orchestrator"])
def test_without_credentials_it_says_in_one_line_what_to_pass(command: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, _args(command, tmp_path))
    assert result.exit_code == 2
    said = " ".join(result.output.split())  # one message (the terminal may wrap it)
    assert said.startswith("error: ") and said.count("error:") == 1, result.output
    assert "needs authentication: pass" in said
    assert WHAT[command] in said and "or --insecure to serve it open" in said
    assert not (tmp_path / "store.db").exists()


@pytest.mark.parametrize("command", ["agent", "orchestrator"])
def test_insecure_warns_before_it_starts(command: str, tmp_path: Path) -> None:
    # A --sync level it cannot read would stop it at once; a bad --timeout does so for the
    # orchestrator only after the warning, so ask for a file that is not there instead.
    args = _args(command, tmp_path)
    if command == "agent":
        args[args.index("--topology") + 1] = str(tmp_path / "missing.yaml")
    else:
        args += ["--agent", "127.0.0.1:1", "--refresh", "0"]
    result = CliRunner().invoke(app, [*args, "--insecure"])
    assert result.exit_code != 0
    assert "warning: --insecure:" in result.output
    assert "accepts calls without authentication" in result.output


def test_a_peer_file_is_random_private_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "peer.token"
    first = CliRunner().invoke(braid, ["token", "peer-file", str(path)])
    assert first.exit_code == 0, first.output
    token = path.read_text().strip()
    assert len(token) >= 32 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    again = CliRunner().invoke(braid, ["token", "peer-file", str(path)])
    assert again.exit_code == 0 and "kept" in again.output
    assert path.read_text().strip() == token
    other = tmp_path / "other.token"
    CliRunner().invoke(braid, ["token", "peer-file", str(other)])
    assert other.read_text().strip() != token
