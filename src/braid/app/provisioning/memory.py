"""An in-memory provisioning store: for tests, emulation runs and single-process use."""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping

from braid.core.provisioning.status import Status

__all__ = ["MemoryProvisioningStore"]


class MemoryProvisioningStore:
    def __init__(self) -> None:
        self._statuses: dict[str, Status] = {}
        self._leases: dict[str, tuple[str, int]] = {}
        self._lock = threading.Lock()
        self.audit: list[tuple[int, str, str, str]] = []  # at, actor, reservation, phase

    def statuses(self, ids: Collection[str] | None = None) -> dict[str, Status]:
        with self._lock:
            if ids is None:
                return dict(self._statuses)
            return {i: self._statuses[i] for i in ids if i in self._statuses}

    def put_statuses(self, changed: Mapping[str, Status], *, now: int, actor: str) -> None:
        with self._lock:
            self._statuses.update(changed)
            self.audit += [(now, actor, rid, s.phase.value) for rid, s in changed.items()]

    def acquire(self, name: str, holder: str, *, now: int, ttl: int) -> bool:
        with self._lock:
            current = self._leases.get(name)
            if current is not None and current[0] != holder and current[1] > now:
                return False
            self._leases[name] = (holder, now + ttl)
            return True
