"""The provisioning store's contract, the same on memory, SQLite and PostgreSQL."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from braid.adapters.store import SqlRepository
from braid.adapters.store.provisioning import SqlProvisioningStore
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.core.provisioning.status import Phase, Status
from tests.integration.store.conftest import Backend


def _store(backend: Backend) -> Any:
    repo = backend.open()
    if isinstance(repo, SqlRepository):
        return repo, SqlProvisioningStore(repo.engine)
    return repo, MemoryProvisioningStore()


def test_states_are_kept_replaced_and_audited(backend: Backend) -> None:
    repo, store = _store(backend)
    assert store.statuses() == {}
    store.put_statuses({"r1": Status(Phase.INSTALLING, since=5)}, now=5, actor="replica-1")
    store.put_statuses(
        {
            "r1": Status(Phase.FAILED, "s2", "connection refused", 6),
            "r2": Status(Phase.INSTALLED, since=6),
        },
        now=6,
        actor="replica-1",
    )
    assert store.statuses() == {
        "r1": Status(Phase.FAILED, "s2", "connection refused", 6),
        "r2": Status(Phase.INSTALLED, since=6),
    }
    if isinstance(repo, SqlRepository):
        entries = [e for e in repo.audit("r1") if e.action == "provisioning"]
        assert [e.to_state for e in entries] == ["installing", "failed"]
        assert entries[-1].detail == {"switch": "s2", "error": "connection refused"}


def test_one_lease_holder_at_a_time_until_it_lapses(backend: Backend) -> None:
    _, store = _store(backend)
    assert store.acquire("provisioner", "a", now=100, ttl=15)
    assert store.acquire("provisioner", "a", now=110, ttl=15)  # renewed to 125
    assert not store.acquire("provisioner", "b", now=120, ttl=15)
    assert store.acquire("provisioner", "b", now=125, ttl=15)
    assert not store.acquire("provisioner", "a", now=126, ttl=15)


def test_racing_replicas_never_both_take_a_fresh_lease(backend: Backend) -> None:
    _, store = _store(backend)
    with ThreadPoolExecutor(8) as pool:
        won = list(pool.map(lambda i: store.acquire("lease", f"r{i}", now=1, ttl=60), range(8)))
    assert won.count(True) == 1


def test_the_circuit_check_is_kept_with_the_state(backend: Backend) -> None:
    _, store = _store(backend)
    checked = {
        "r1": Status(Phase.INSTALLED, since=7, verified=True, check="4 path directions verified"),
        "r2": Status(Phase.INSTALLED, since=7, verified=False, check="lost at s2"),
        "r3": Status(Phase.INSTALLED, since=7),
    }
    store.put_statuses(checked, now=7, actor="replica-1")
    assert store.statuses() == checked
