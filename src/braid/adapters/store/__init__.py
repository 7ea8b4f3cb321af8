"""The SQL store: SQLAlchemy models, Alembic migrations and `SqlRepository`.

    repository = open_repository(default_database_url())

SQLite (a file; WAL; one writer at a time) and PostgreSQL (row locks per
link) are both supported; see `repository` for how writers are kept from
overbooking a link.
"""

from __future__ import annotations

from braid.adapters.store.engine import (
    create_engine_from_url,
    default_database_url,
    upgrade,
)
from braid.adapters.store.repository import SqlRepository

__all__ = [
    "SqlRepository",
    "create_engine_from_url",
    "default_database_url",
    "open_repository",
    "upgrade",
]


def open_repository(url: str, *, sqlite_synchronous: str = "full") -> SqlRepository:
    """A repository on `url`, with the schema migrated to the newest revision first."""
    engine = create_engine_from_url(url, sqlite_synchronous=sqlite_synchronous)
    upgrade(engine)
    return SqlRepository(engine)
