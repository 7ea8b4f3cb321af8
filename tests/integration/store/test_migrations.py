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


_RESERVATION = text(
    'INSERT INTO reservations (id, token, owner, state, src, dst, start, "end", "symmetric", '
    "kind, request, plan, created_at, updated_at, version, seq) VALUES "
    "(:id, :id, 'alice', 'reserved', 'A', 'B', 0, 100, true, 'fixed', '{}', '{}', 0, 0, 1, 1)"
)
_LOAD = text(
    'INSERT INTO link_loads (reservation_id, link_id, forward, start, "end", bandwidth, '
    "counts_until) VALUES (:id, :link, true, :start, :end, 5, :end)"
)


def test_upgrade_gives_each_link_the_longest_load_it_carries(sql_backend: Backend) -> None:
    """0007 backfills `links.longest_load`, with a row for a loaded link that had none."""
    assert sql_backend.url is not None
    engine = create_engine_from_url(sql_backend.url)
    config = alembic_config()
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "0006")
            connection.execute(text("INSERT INTO links (id) VALUES ('L1'), ('L3')"))
            connection.execute(_RESERVATION, [{"id": "r1"}, {"id": "r2"}])
            loads = [("r1", "L1", 0, 60), ("r2", "L1", 10, 400), ("r2", "L2", 5, 35)]
            connection.execute(
                _LOAD,
                [dict(zip(("id", "link", "start", "end"), row, strict=True)) for row in loads],
            )
        upgrade(engine)
        with engine.connect() as connection:
            found = connection.execute(text("SELECT id, longest_load FROM links ORDER BY id"))
            assert found.all() == [("L1", 390), ("L2", 30), ("L3", 0)]
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
