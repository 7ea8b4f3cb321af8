"""Engines for the store: URL defaults, SQLite transaction control, migrations."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Final

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, make_url, text

MIGRATIONS: Final = Path(__file__).resolve().parent / "migrations"
# Transactions that will write ask for SQLite's write lock when they begin.
WRITE_OPTION: Final = "braid_write"
SQLITE_BUSY_TIMEOUT_MS: Final = 30_000
# Any fixed number: serialises concurrent migrations of one PostgreSQL database.
_MIGRATION_LOCK: Final = 0x62726169
# Alembic keeps the running migration in module globals: one at a time per process.
_UPGRADING: Final = threading.Lock()


def default_database_url() -> str:
    """`BRAID_DATABASE_URL`, else a SQLite file `braid.db` in the current directory."""
    return os.environ.get("BRAID_DATABASE_URL") or "sqlite:///braid.db"


def create_engine_from_url(url: str, *, sqlite_synchronous: str = "full", **kwargs: Any) -> Engine:
    """An engine for `url`; SQLite engines get WAL, a busy timeout and real BEGINs.

    `sqlite_synchronous` is SQLite's `PRAGMA synchronous` ("full" or "normal").
    """
    if sqlite_synchronous not in ("full", "normal"):
        raise ValueError(f"sqlite_synchronous must be full or normal, not {sqlite_synchronous!r}")
    if make_url(url).get_backend_name() == "postgresql":
        kwargs = {**kwargs, "connect_args": _without_jit(kwargs.get("connect_args"))}
    engine = create_engine(url, **kwargs)
    if engine.dialect.name == "sqlite":
        _control_sqlite_transactions(engine, sqlite_synchronous)
    return engine


def _without_jit(connect_args: dict[str, Any] | None) -> dict[str, Any]:
    """Connection arguments that turn PostgreSQL's JIT compiler off for braid's sessions.

    braid's statements are short and prepared; a generic plan's cost estimate
    can cross the JIT threshold for a lookup of a few rows, and compiling
    then costs milliseconds that the lookup itself never needs.
    """
    args = dict(connect_args or {})
    args["options"] = " ".join(filter(None, [args.get("options"), "-c jit=off"]))
    return args


def writer(engine: Engine) -> Engine:
    """The same engine (same pool), whose transactions take the write lock at BEGIN."""
    return engine.execution_options(**{WRITE_OPTION: True})


def _control_sqlite_transactions(engine: Engine, synchronous: str) -> None:
    """Let SQLAlchemy, not the sqlite3 driver, emit BEGIN (the documented pysqlite recipe).

    The driver would begin lazily at the first INSERT, after our reads, so two
    writers could both read the old loads. `BEGIN IMMEDIATE` takes the database
    write lock before the first read instead; WAL lets readers go on meanwhile,
    and the busy timeout makes a second writer (thread or process) wait for the
    lock rather than fail at once.
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver emits no BEGIN at all
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute(f"PRAGMA synchronous = {synchronous.upper()}")
        if engine.url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode = WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        immediate = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def alembic_config() -> Config:
    """Alembic configuration built in code: no alembic.ini is needed at run time."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` in one transaction, safe from many threads or processes.

    Other processes wait: on PostgreSQL for an advisory lock, on SQLite for
    the write lock that `BEGIN IMMEDIATE` takes.
    """
    config = alembic_config()
    with _UPGRADING, writer(engine).begin() as connection:
        if connection.dialect.name == "postgresql":
            # Two first starts at once would both try to create the tables.
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
