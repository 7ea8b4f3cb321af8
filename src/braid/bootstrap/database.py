"""The store's administration: bring the schema up to date, back it up, restore it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.exc import ArgumentError, DBAPIError

from braid.adapters.store.backup import (
    BackupSummary,
    backup,
    backup_revision,
    restore,
    schema_revision,
)
from braid.adapters.store.engine import create_engine_from_url, upgrade
from braid.bootstrap.serve import StoreUnavailableError, hide_password

__all__ = ["backup_store", "restore_store", "upgrade_store"]


def upgrade_store(url: str) -> tuple[str | None, str]:
    """Migrate the store at `url` to the newest schema; the revisions before and after."""
    with _opened(url) as engine:
        before = _revision_of(engine)
        upgrade(engine)
        with engine.connect() as connection:
            return before, schema_revision(connection)


def backup_store(url: str, path: Path) -> BackupSummary:
    """Write a consistent snapshot of the store to `path` (written whole, then renamed)."""
    partial = path.with_name(path.name + ".partial")
    try:
        with _opened(url) as engine, partial.open("w", encoding="utf-8") as out:
            summary = backup(engine, out)
        partial.replace(path)
        return summary
    finally:
        partial.unlink(missing_ok=True)


def restore_store(url: str, path: Path, *, replace: bool = False) -> BackupSummary:
    """Load `path` into the store at `url`, then migrate it to the newest schema.

    A new store is first brought to the backup's own revision, so a backup
    written by an older braid restores and is then upgraded like any store.
    """
    with path.open(encoding="utf-8") as source:
        revision = backup_revision(source)
    with _opened(url) as engine, path.open(encoding="utf-8") as source:
        if _revision_of(engine) is None:
            upgrade(engine, revision)
        summary = restore(engine, source, replace=replace)
        upgrade(engine)
        return summary


def _revision_of(engine: Engine) -> str | None:
    with engine.connect() as connection:
        if not engine.dialect.has_table(connection, "alembic_version"):
            return None
        return schema_revision(connection)


@contextmanager
def _opened(url: str) -> Iterator[Engine]:
    """An engine on `url`; the driver's errors (bad URL, no server, no permission) as one."""
    where = hide_password(url)
    try:
        engine = create_engine_from_url(url)
    except (ArgumentError, ImportError, ValueError) as exc:
        raise StoreUnavailableError(f"cannot open the database {where}: {exc}") from exc
    try:
        yield engine
    except DBAPIError as exc:
        raise StoreUnavailableError(f"database {where}: {exc.orig or exc}") from exc
    finally:
        engine.dispose()
