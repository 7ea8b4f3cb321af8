"""`braid token create | list | revoke` as real processes on a SQLite file."""

from __future__ import annotations

from pathlib import Path

from braid.app.auth import hash_token
from tests.cli.test_client_cli import braid


def test_create_list_and_revoke(tmp_path: Path) -> None:
    database = ["--database", f"sqlite:///{tmp_path}/braid.db"]
    made = braid("token", "create", "--user", "alice", "--expires", "90d", *database)
    assert made.returncode == 0, made.stderr
    alice = hash_token(made.stdout.strip())[:12]
    assert alice in made.stderr and "expires 20" in made.stderr
    made = braid("token", "create", "--user", "olga", "--role", "operator", *database)
    olga = hash_token(made.stdout.strip())[:12]
    assert "never expires" in made.stderr

    listed = braid("token", "list", *database)
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines() if alice in line or olga in line]
    assert len(rows) == 2 and "never" in rows[1] and "operator" in rows[1]
    assert made.stdout.strip() not in listed.stdout  # ids only, never secrets

    revoked = braid("token", "revoke", alice[:8], *database)
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout.strip() == f"revoked {alice} (alice)"
    again = braid("token", "revoke", alice, *database)
    assert again.returncode == 0 and "revoked already" in again.stderr

    everyone = braid("token", "revoke", "--user", "olga", *database)
    assert everyone.stdout.strip() == f"revoked {olga} (olga)"
    listed = braid("token", "list", "--user", "olga", *database)
    assert olga in listed.stdout and "alice" not in listed.stdout


def test_refusals_are_one_line_errors(tmp_path: Path) -> None:
    database = ["--database", f"sqlite:///{tmp_path}/braid.db"]
    bad = braid("token", "create", "--user", "a", "--expires", "soon", *database)
    assert bad.returncode == 2 and "--expires" in bad.stderr
    unknown = braid("token", "revoke", "abcdef", *database)
    assert unknown.returncode == 2 and "no token has an id starting 'abcdef'" in unknown.stderr
    nothing = braid("token", "revoke", *database)
    assert nothing.returncode == 2 and "name a token id, or a user" in nothing.stderr
