"""`SqlNsiConnections`: NSI connections in braid's database, each change guarded by a version."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from sqlalchemy import Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from braid.adapters.store.engine import writer
from braid.adapters.store.repository import collisions_as_conflicts
from braid.adapters.store.schema import Base
from braid.app.nsi.messages import Criteria
from braid.app.nsi.records import Connection
from braid.app.ports import ConflictError
from braid.core.nsi.connection import ConnectionStates
from braid.core.nsi.states import LifecycleState, ProvisionState, ReservationState

__all__ = ["SqlNsiConnections", "connection_from_json", "connection_to_json"]

CONNECTIONS = Base.metadata.tables["nsi_connections"]


class SqlNsiConnections:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._writer = writer(engine)

    def get(self, connection_id: str) -> Connection | None:
        with self.engine.connect() as connection:
            row = connection.execute(
                select(CONNECTIONS).where(CONNECTIONS.c.id == connection_id)
            ).first()
        return None if row is None else connection_from_json(row.data, row.version)

    def all(self) -> Sequence[Connection]:
        with self.engine.connect() as connection:
            rows = connection.execute(select(CONNECTIONS).order_by(CONNECTIONS.c.id)).all()
        return [connection_from_json(row.data, row.version) for row in rows]

    def put(self, connection: Connection) -> Connection:
        kept = replace(connection, version=connection.version + 1)
        values = {"data": connection_to_json(kept), "version": kept.version}
        if connection.version == 0:
            try:
                with collisions_as_conflicts(), self._writer.begin() as db:
                    db.execute(
                        insert(CONNECTIONS).values(
                            id=connection.id, requester_nsa=connection.requester_nsa, **values
                        )
                    )
            except IntegrityError as exc:
                raise ConflictError([f"connection {connection.id} exists already"]) from exc
            return kept
        with collisions_as_conflicts(), self._writer.begin() as db:
            changed = db.execute(
                update(CONNECTIONS)
                .where(CONNECTIONS.c.id == connection.id)
                .where(CONNECTIONS.c.version == connection.version)
                .values(**values)
            ).rowcount
        if changed != 1:
            raise ConflictError([f"connection {connection.id} changed meanwhile"])
        return kept


def connection_to_json(c: Connection) -> dict[str, Any]:
    data = asdict(c)
    data.pop("version")
    data["states"] = {
        "reservation": c.states.reservation.value,
        "provision": c.states.provision.value if c.states.provision else None,
        "lifecycle": c.states.lifecycle.value,
    }
    return data


def connection_from_json(data: dict[str, Any], version: int) -> Connection:
    states = data["states"]
    provision = states["provision"]
    return Connection(
        **{
            **data,
            "criteria": Criteria(**data["criteria"]),
            "ports": tuple(data["ports"]),
            "vlans": tuple(data["vlans"]),
            "states": ConnectionStates(
                ReservationState(states["reservation"]),
                ProvisionState(provision) if provision else None,
                LifecycleState(states["lifecycle"]),
            ),
            "version": version,
        }
    )
