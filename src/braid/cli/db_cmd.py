"""`braid db upgrade | backup | restore`: the store's schema and its backups."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from braid.cli.common import err_console, fail
from braid.cli.serve_cmd import ConfigOpt, DatabaseOpt, settings_from

app = typer.Typer(help="The store: schema upgrades, backups, restores.", no_args_is_help=True)

T = TypeVar("T")
FileArg = Annotated[Path, typer.Argument(help="Backup file (JSON lines).")]


@app.command("upgrade")
def upgrade(database: DatabaseOpt = None, config: ConfigOpt = None) -> None:
    """Migrate the store to this braid's schema (braid serve also does it when it starts)."""
    from braid.bootstrap.database import upgrade_store

    url = settings_from(config, database=database).database_url
    before, after = _run(lambda: upgrade_store(url))
    if before == after:
        typer.echo(f"schema at revision {after}; nothing to do")
    else:
        typer.echo(f"schema {before or 'none'} -> {after}")


@app.command("backup")
def backup(path: FileArg, database: DatabaseOpt = None, config: ConfigOpt = None) -> None:
    """Write a consistent snapshot of every table; safe while braid serve runs."""
    from braid.bootstrap.database import backup_store

    url = settings_from(config, database=database).database_url
    summary = _run(lambda: backup_store(url, path))
    typer.echo(f"{summary.total} rows of schema {summary.revision} written to {path}")


@app.command("restore")
def restore(
    path: FileArg,
    replace: Annotated[
        bool, typer.Option("--replace", help="Delete what the store holds first.")
    ] = False,
    database: DatabaseOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Load a backup into an empty store (or, with --replace, instead of what it holds)."""
    from braid.bootstrap.database import restore_store

    if not path.is_file():
        fail(f"no backup file {path}")
    url = settings_from(config, database=database).database_url
    summary = _run(lambda: restore_store(url, path, replace=replace))
    typer.echo(f"{summary.total} rows of schema {summary.revision} restored from {path}")
    err_console.print("[dim]restart braid serve so that it reads the restored store[/]")


def _run(action: Callable[[], T]) -> T:
    from braid.bootstrap.serve import StoreUnavailableError
    from braid.core.errors import InputError

    try:
        return action()
    except StoreUnavailableError as exc:
        fail(str(exc))
    except InputError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"{exc.filename or ''}: {exc.strerror or exc}")
