"""Alembic environment: runs on the connection `braid.adapters.store.engine.upgrade` passes."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from braid.adapters.store.engine import create_engine_from_url
from braid.adapters.store.schema import Base


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=Base.metadata)
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    connection = context.config.attributes.get("connection")
    if isinstance(connection, Connection):
        _run(connection)
        return
    # Plain `alembic` command line use, with sqlalchemy.url in an ini file.
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no connection given and no sqlalchemy.url configured")
    with create_engine_from_url(url).begin() as own:
        _run(own)


if context.is_offline_mode():
    raise RuntimeError("braid's migrations run online only")
_main()
