"""The NSI connection store's contract, the same on memory, SQLite and PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from braid.adapters.store import SqlRepository
from braid.adapters.store.nsi import SqlNsiConnections
from braid.app.nsi.memory import MemoryConnections
from braid.app.nsi.messages import Criteria
from braid.app.nsi.records import Connection
from braid.app.ports import ConflictError
from braid.core.nsi.connection import ConnectionStates
from braid.core.nsi.states import LifecycleState, ProvisionState, ReservationState
from tests.integration.store.conftest import Backend

CONNECTION = Connection(
    id="r-1",
    requester_nsa="urn:ogf:network:requester.test:nsa",
    reply_to="http://127.0.0.1:1/reply",
    global_reservation_id=None,
    description="a test",
    criteria=Criteria(1, 100, 200, 50, "urn:x:p1?vlan=1780", "urn:x:p2?vlan=1781"),
    ports=("p1", "p2"),
    vlans=(1780, 1781),
    states=ConnectionStates(ReservationState.HELD),
    booked=True,
    start=100,
    end=200,
)


def _store(backend: Backend) -> Any:
    repo = backend.open()
    return (
        SqlNsiConnections(repo.engine) if isinstance(repo, SqlRepository) else MemoryConnections()
    )


def test_a_connection_is_kept_whole_and_survives_a_restart(backend: Backend) -> None:
    store = _store(backend)
    assert store.get("r-1") is None
    first = store.put(CONNECTION)
    moved = replace(
        first,
        states=ConnectionStates(
            ReservationState.START, ProvisionState.PROVISIONED, LifecycleState.CREATED
        ),
    )
    second = store.put(moved)
    assert second.version == 2
    again = _store(backend) if backend.url is not None else store
    assert again.get("r-1") == second
    assert list(again.all()) == [second]


def test_a_change_from_a_stale_version_is_a_conflict(backend: Backend) -> None:
    store = _store(backend)
    first = store.put(CONNECTION)
    store.put(first)
    with pytest.raises(ConflictError):
        store.put(first)
    with pytest.raises(ConflictError):
        store.put(CONNECTION)  # version 0: a second insert of the same id
