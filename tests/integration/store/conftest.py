"""Backends for the store contract: memory, SQLite file, PostgreSQL.

PostgreSQL tests need `BRAID_TEST_POSTGRES_URL` (scripts/pg-test-server
starts a throwaway server and prints one). Without it they are skipped,
except in CI (`CI=true`), where they fail so CI never skips them silently.
Each pytest-xdist worker gets its own database, and every test starts from
an empty schema.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from braid.adapters.store import SqlRepository, open_repository
from braid.app.reservations.memory_store import MemoryRepository

POSTGRES_ENV = "BRAID_TEST_POSTGRES_URL"


def postgres_base_url() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        message = (
            f"{POSTGRES_ENV} is not set; for the PostgreSQL tests run "
            f'`export {POSTGRES_ENV}="$(scripts/pg-test-server)"`'
        )
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the PostgreSQL tests: {message}")
        pytest.skip(message)
    return url


@pytest.fixture(scope="session")
def postgres_database() -> str:
    """A database of this test worker's own, created once on the test server."""
    base = make_url(postgres_base_url())
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")  # gw0, gw1... under xdist
    name = f"{base.database or 'braid_test'}_{worker}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            query = text("SELECT 1 FROM pg_database WHERE datname = :name")
            if connection.execute(query, {"name": name}).first() is None:
                connection.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    return base.set(database=name).render_as_string(hide_password=False)


@pytest.fixture
def postgres_url(postgres_database: str) -> str:
    """The worker's database with an empty public schema."""
    engine = create_engine(postgres_database)
    try:
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA IF EXISTS public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
    finally:
        engine.dispose()
    return postgres_database


@dataclass
class Backend:
    """Opens repositories on one storage; `reopen` simulates a restart."""

    name: str
    url: str | None
    opened: list[Any] = field(default_factory=list)

    def open(self) -> Any:
        repo: Any = MemoryRepository() if self.url is None else open_repository(self.url)
        self.opened.append(repo)
        return repo

    def close_all(self) -> None:
        for repo in self.opened:
            if isinstance(repo, SqlRepository):
                repo.close()
        self.opened.clear()


def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'braid.db'}"


def make_backend(name: str, request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if name == "memory":
        return Backend(name, None)
    if name == "sqlite":
        return Backend(name, sqlite_url(tmp_path))
    return Backend(name, request.getfixturevalue("postgres_url"))


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    made = make_backend(request.param, request, tmp_path)
    yield made
    made.close_all()


@pytest.fixture(params=["sqlite", "postgres"])
def sql_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    made = make_backend(request.param, request, tmp_path)
    yield made
    made.close_all()


@pytest.fixture
def repo(backend: Backend) -> Any:
    return backend.open()
