"""The Alembic migrations build exactly the schema the models describe; error mapping."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import OperationalError

from braid.adapters.store import create_engine_from_url, upgrade
from braid.adapters.store.engine import MIGRATIONS, alembic_config
from braid.adapters.store.repository import collisions_as_conflicts
from braid.adapters.store.schema import Base
from braid.app.ports import ConflictError
from tests.integration.store.conftest import Backend
from tests.integration.store.workload import first_start


def differences(engine: Engine) -> list[object]:
    with engine.connect() as connection:
        found: list[object] = compare_metadata(
            MigrationContext.configure(connection), Base.metadata
        )
    return found


def test_migrations_give_exactly_the_models(sql_backend: Backend) -> None:
    assert sql_backend.url is not None
    engine = create_engine_from_url(sql_backend.url)
    try:
        upgrade(engine)
        assert differences(engine) == []
        with engine.connect() as connection:
            assert connection.execute(text("SELECT id, seq FROM state")).all() == [(1, 0)]
    finally:
        engine.dispose()


def test_upgrade_is_idempotent_and_downgrade_undoes_it(sql_backend: Backend) -> None:
    assert sql_backend.url is not None
    engine = create_engine_from_url(sql_backend.url)
    try:
        upgrade(engine)
        upgrade(engine)
        config = alembic_config()
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        upgrade(engine)
        assert differences(engine) == []
    finally:
        engine.dispose()


def test_two_first_starts_at_once_both_succeed(sql_backend: Backend) -> None:
    assert sql_backend.url is not None
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        started = list(pool.map(first_start, [sql_backend.url] * 2, [0.5] * 2))
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert started == [head, head]


def test_migration_files_ship_inside_the_package() -> None:
    assert (MIGRATIONS / "env.py").is_file()
    assert (MIGRATIONS / "script.py.mako").is_file()
    assert (MIGRATIONS / "versions" / "0001_initial.py").is_file()
    assert (MIGRATIONS / "versions" / "0002_load_counts_until.py").is_file()


class _DriverError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def test_deadlocks_and_serialization_failures_read_as_conflicts() -> None:
    for code in ("40P01", "40001"):
        with pytest.raises(ConflictError, match=code), collisions_as_conflicts():
            raise OperationalError("COMMIT", {}, _DriverError(code))
    with pytest.raises(OperationalError), collisions_as_conflicts():
        raise OperationalError("SELECT", {}, _DriverError("08006"))  # a lost connection stays one
