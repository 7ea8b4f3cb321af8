"""A PostgreSQL database of a test's own, for tests that run whole processes on it."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.integration.store.conftest import postgres_base_url


@pytest.fixture
def throwaway_postgres() -> Iterator[str]:
    """A new database on the test server, dropped afterwards (nothing shared with other runs)."""
    base = make_url(postgres_base_url())
    name = f"braid_throwaway_{secrets.token_hex(4)}"
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(text(f'CREATE DATABASE "{name}"'))
        yield base.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
