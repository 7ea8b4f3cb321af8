"""Backup and restore of the whole store as JSON lines, portable between SQLite and PostgreSQL.

A backup is one header line (format, version, schema revision, row counts)
and one line per row, tables in dependency order, rows in primary-key order.
It is read in one transaction, so it is a consistent snapshot even while
`braid serve` writes. A restore goes into a store of the same schema
revision, in one transaction: all of it or nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any, Final

from sqlalchemy import (
    Connection,
    Engine,
    Integer,
    MetaData,
    Table,
    delete,
    func,
    insert,
    select,
    text,
)

from braid.adapters.store.engine import writer
from braid.core.errors import InputError

__all__ = ["BackupSummary", "backup", "backup_revision", "restore", "schema_revision"]

FORMAT: Final = "braid-backup"
VERSION: Final = 1
_BATCH: Final = 1000
# Tables a new schema already fills (the change cursor): a restore replaces their rows.
SEEDED: Final = frozenset({"state"})


@dataclass(frozen=True, slots=True)
class BackupSummary:
    revision: str
    rows: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def _tables(connection: Connection) -> list[Table]:
    """The store's tables as they are at its revision, in dependency order."""
    found = MetaData()
    found.reflect(connection)
    return [t for t in found.sorted_tables if t.name != "alembic_version"]


def schema_revision(connection: Connection) -> str:
    found = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    if found is None:
        raise InputError("database", "has no braid schema yet; run braid db upgrade")
    return str(found)


def backup(engine: Engine, out: IO[str]) -> BackupSummary:
    """Write every row of the store to `out`; a consistent snapshot."""
    with engine.connect() as connection, connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"))
        tables = _tables(connection)
        rows = {t.name: _count(connection, t) for t in tables}
        summary = BackupSummary(schema_revision(connection), rows)
        header = {"format": FORMAT, "version": VERSION, "revision": summary.revision, "rows": rows}
        out.write(json.dumps(header) + "\n")
        for table in tables:
            ordered = select(table).order_by(*table.primary_key.columns)
            for row in connection.execute(ordered).mappings():
                out.write(json.dumps({"table": table.name, "row": dict(row)}) + "\n")
    return summary


def _count(connection: Connection, table: Table) -> int:
    return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def restore(engine: Engine, source: IO[str], *, replace: bool = False) -> BackupSummary:
    """Load a backup into `engine`'s store (migrated to the backup's revision).

    The store must be empty unless `replace`, which deletes what it holds
    first, in the same transaction. Errors name the backup's line.
    """
    header = _header(source.readline())
    with writer(engine).begin() as connection:
        tables = _tables(connection)
        revision = schema_revision(connection)
        if revision != header["revision"]:
            raise InputError(
                "backup",
                f"is of schema revision {header['revision']}, the store of {revision}; "
                "restore with the braid version that wrote it, then upgrade",
            )
        _make_room(connection, tables, replace)
        loaded = _load(connection, {t.name: t for t in tables}, _rows(source))
        _check_counts(header["rows"], loaded)
        if connection.dialect.name == "postgresql":
            _advance_sequences(connection, tables)
    return BackupSummary(revision, loaded)


def backup_revision(source: IO[str]) -> str:
    """The schema revision a backup was written at (reads its first line)."""
    return str(_header(source.readline())["revision"])


def _header(line: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError("backup", f"line 1 is not a braid backup header: {exc}") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise InputError("backup", "line 1 is not a braid backup header")
    if header.get("version") != VERSION:
        raise InputError("backup", f"format version {header.get('version')}, expected {VERSION}")
    return header


def _make_room(connection: Connection, tables: list[Table], replace: bool) -> None:
    held = [t.name for t in tables if t.name not in SEEDED and _count(connection, t)]
    if held and not replace:
        raise InputError(
            "database", f"is not empty ({', '.join(held)}); restore into a new one or --replace"
        )
    for table in reversed(tables):
        connection.execute(delete(table))


def _rows(source: IO[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    for number, line in enumerate(source, start=2):
        try:
            item = json.loads(line)
            yield str(item["table"]), dict(item["row"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError("backup", f"line {number} is not a row: {exc}") from exc


def _load(
    connection: Connection, tables: Mapping[str, Table], rows: Iterator[tuple[str, dict[str, Any]]]
) -> dict[str, int]:
    loaded = dict.fromkeys(tables, 0)
    batch: list[dict[str, Any]] = []
    current: str | None = None
    for name, row in rows:
        if name not in tables:
            raise InputError("backup", f"unknown table {name!r}")
        if name != current or len(batch) >= _BATCH:
            _insert(connection, tables, current, batch)
            current, batch = name, []
        batch.append(row)
        loaded[name] += 1
    _insert(connection, tables, current, batch)
    return loaded


def _insert(
    connection: Connection, tables: Mapping[str, Table], name: str | None, rows: list[Any]
) -> None:
    if name is not None and rows:
        connection.execute(insert(tables[name]), rows)


def _check_counts(expected: Mapping[str, int], loaded: Mapping[str, int]) -> None:
    short = {t: (n, loaded.get(t, 0)) for t, n in expected.items() if loaded.get(t, 0) != n}
    if short:
        table, (want, got) = next(iter(short.items()))
        raise InputError("backup", f"is cut short: {table} has {got} of {want} rows")


def _advance_sequences(connection: Connection, tables: list[Table]) -> None:
    """Rows were inserted with their ids: move each id sequence past the largest.

    A column without a sequence gets NULL from pg_get_serial_sequence, and
    setval of NULL does nothing.
    """
    for table in tables:
        for column in table.primary_key.columns:
            if not isinstance(column.type, Integer):
                continue
            connection.execute(
                text(
                    "SELECT setval(pg_get_serial_sequence(:table, :column), "
                    f"COALESCE((SELECT MAX({column.name}) FROM {table.name}), 0) + 1, false)"
                ),
                {"table": table.name, "column": column.name},
            )
