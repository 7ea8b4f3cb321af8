"""`braid token create`: API tokens, written straight into the store."""

from __future__ import annotations

from typing import Annotated

import typer

from braid.app.auth import ROLES
from braid.cli.common import err_console, fail
from braid.cli.serve_cmd import ConfigOpt, DatabaseOpt, settings_from

app = typer.Typer(help="Create API tokens.", no_args_is_help=True)


@app.command("create")
def create(
    user: Annotated[str, typer.Option("--user", "-u", help="Who the token speaks for.")],
    role: Annotated[str, typer.Option("--role", help="user or operator.")] = "user",
    database: DatabaseOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Create a token and print it; it is shown this once (the store keeps only a hash)."""
    import time

    from braid.app.auth import create_token
    from braid.bootstrap.serve import (
        StoreUnavailableError,
        close_store,
        hide_password,
        open_store,
    )

    if role not in ROLES:
        fail(f"--role must be one of {', '.join(ROLES)}, not {role!r}")
    settings = settings_from(config, database=database)
    try:
        repo = open_store(settings.database_url)
    except StoreUnavailableError as exc:
        fail(str(exc))
    try:
        token = create_token(repo, user, role, int(time.time()))
    except ValueError as exc:
        fail(str(exc))
    finally:
        close_store(repo)
    typer.echo(token)
    err_console.print(
        f"[dim]token for {user} ({role}) in {hide_password(settings.database_url)}; use it with:[/]"
    )
    err_console.print(f"export BRAID_TOKEN={token}", markup=False, highlight=False)
