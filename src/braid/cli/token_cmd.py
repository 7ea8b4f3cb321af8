"""`braid token create | list | revoke`: API tokens, straight in the store."""

from __future__ import annotations

import getpass
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.console import Console

from braid.app.auth import ROLES
from braid.cli.common import err_console, fail
from braid.cli.serve_cmd import ConfigOpt, DatabaseOpt, settings_from

if TYPE_CHECKING:
    from braid.app.ports import Repository
    from braid.app.records import TokenInfo

app = typer.Typer(
    help="Create, list and revoke API tokens; write peer tokens for agents.", no_args_is_help=True
)

T = TypeVar("T")


@contextmanager
def _store(database: str | None, config: ConfigOpt) -> Iterator[tuple[Repository, str]]:
    """The store the settings name (migrated), and its URL without a password."""
    from braid.bootstrap.serve import StoreUnavailableError, close_store, hide_password, open_store

    settings = settings_from(config, database=database)
    try:
        repo = open_store(settings.database_url)
    except StoreUnavailableError as exc:
        fail(str(exc))
    try:
        yield repo, hide_password(settings.database_url)
    finally:
        close_store(repo)


def _refusing(action: Callable[[], T]) -> T:
    """`action()`, with the service's refusals as one-line CLI errors."""
    from braid.app.errors import NotFoundError

    try:
        return action()
    except (ValueError, NotFoundError) as exc:
        fail(str(exc))


def _actor() -> str:
    # The audit log names who ran the command on the store's host.
    try:
        return f"{getpass.getuser()} (cli)"
    except (KeyError, OSError):  # no name for this uid (e.g. a bare container)
        return "cli"


@app.command("create")
def create(
    user: Annotated[str, typer.Option("--user", "-u", help="Who the token speaks for.")],
    role: Annotated[str, typer.Option("--role", help="user or operator.")] = "user",
    expires: Annotated[
        str | None,
        typer.Option(
            "--expires",
            help="Lifetime: 3600, 90s, 15m, 12h, 90d. Default: the token never expires.",
        ),
    ] = None,
    database: DatabaseOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Create a token and print it; it is shown this once (the store keeps only a hash)."""
    from braid.app.auth import create_token, hash_token
    from braid.app.records import token_id
    from braid.core.model.units import parse_duration

    if role not in ROLES:
        fail(f"--role must be one of {', '.join(ROLES)}, not {role!r}")
    lifetime = _refusing(lambda: None if expires is None else parse_duration(expires, "--expires"))
    now = int(time.time())
    with _store(database, config) as (repo, where):
        token = _refusing(
            lambda: create_token(repo, user, role, now, expires_in=lifetime, actor=_actor())
        )
    typer.echo(token)
    until = "never expires" if lifetime is None else f"expires {_when(now + lifetime)}"
    err_console.print(
        f"[dim]token {token_id(hash_token(token))} for {user} ({role}) in {where}, "
        f"{until}; use it with:[/]"
    )
    err_console.print(f"export BRAID_TOKEN={token}", markup=False, highlight=False)


@app.command("list")
def list_(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user's.")] = None,
    database: DatabaseOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Tokens by id (the start of the stored hash; never the token itself), oldest first."""
    from braid.app.tokens import list_tokens

    with _store(database, config) as (repo, _):
        found = list_tokens(repo, user)
    Console().print(_table(found, int(time.time())))


@app.command("revoke")
def revoke(
    token: Annotated[
        str | None, typer.Argument(help="A token id from `braid token list`, or its start.")
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="Revoke every token of this user.")
    ] = None,
    database: DatabaseOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Revoke a token, or all of a user's; servers refuse it within 5 seconds."""
    from braid.app.tokens import revoke_tokens

    now = int(time.time())
    with _store(database, config) as (repo, _):
        revoked = _refusing(
            lambda: revoke_tokens(repo, now=now, actor=_actor(), token=token, user=user)
        )
    if not revoked:
        err_console.print("nothing to revoke: revoked already")
        return
    for info in revoked:
        typer.echo(f"revoked {info.id} ({info.user})")


@app.command("peer-file")
def peer_file(
    path: Annotated[Path, typer.Argument(help="Where to write it (kept if it holds one).")],
) -> None:
    """Write a random peer token to PATH (only its owner may read it): the file agents
    (`braid agent --peer-token-file`) and their orchestrator (`braid orchestrator` or
    `braid serve --domains`, `--peer-token-file`) share."""
    import os
    import secrets

    from braid.adapters.rpc.channels import read_token

    if path.exists():
        try:
            read_token(path, "peer-file")
        except ValueError as exc:
            fail(f"{exc}; remove it to write a new one")
        err_console.print(f"{path} holds a peer token already: kept")
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror}")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(32) + "\n")
    err_console.print(f"wrote a peer token to {path}; pass it as --peer-token-file {path}")


def _table(found: list[TokenInfo], now: int) -> object:
    from rich.table import Table
    from rich.text import Text

    if not found:
        return Text("no tokens")
    table = Table(title=f"{len(found)} token(s)")
    for column in ("id", "user", "role", "created", "expires", "revoked"):
        table.add_column(column, no_wrap=column == "id", overflow="fold")
    for t in found:
        expires = "never" if t.expires_at is None else _when(t.expires_at)
        if t.expires_at is not None and t.expires_at <= now:
            expires += " (expired)"
        revoked = "" if t.revoked_at is None else _when(t.revoked_at)
        table.add_row(t.id, t.user, t.role, _when(t.created_at), expires, revoked)
    return table


def _when(at: int) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
