"""`SqlProvisioningStore`: provisioning states and the provisioner's lease, on the same database.

A lease is taken with one conditional write (insert the row, or take it over
when it has lapsed or is already ours), so two replicas can never both think
they hold it: the database serialises the two writes and only one matches.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from braid.adapters.store.codec import AUDIT, audit_values
from braid.adapters.store.engine import writer
from braid.adapters.store.repository import collisions_as_conflicts
from braid.adapters.store.schema import Base
from braid.app.ports import ConflictError
from braid.app.records import AuditEntry
from braid.core.provisioning.status import Phase, Status

__all__ = ["SqlProvisioningStore"]

PROVISIONING = Base.metadata.tables["provisioning"]
LEASES = Base.metadata.tables["leases"]


class SqlProvisioningStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._writer = writer(engine)

    def statuses(self, ids: Collection[str] | None = None) -> dict[str, Status]:
        query = select(PROVISIONING)
        if ids is not None:
            query = query.where(PROVISIONING.c.reservation_id.in_(list(ids)))
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return {
            row.reservation_id: Status(
                Phase(row.phase), row.switch, row.error, row.since, row.verified, row.circuit_check
            )
            for row in rows
        }

    def put_statuses(self, changed: Mapping[str, Status], *, now: int, actor: str) -> None:
        if not changed:
            return
        with collisions_as_conflicts(), self._writer.begin() as connection:
            ids = list(changed)
            connection.execute(delete(PROVISIONING).where(PROVISIONING.c.reservation_id.in_(ids)))
            connection.execute(
                insert(PROVISIONING),
                [
                    {
                        "reservation_id": rid,
                        "phase": s.phase.value,
                        "switch": s.switch,
                        "error": s.error,
                        "since": s.since,
                        "verified": s.verified,
                        "circuit_check": s.check,
                    }
                    for rid, s in changed.items()
                ],
            )
            connection.execute(
                insert(AUDIT),
                [audit_values(_audit(rid, s, now, actor)) for rid, s in changed.items()],
            )

    def acquire(self, name: str, holder: str, *, now: int, ttl: int) -> bool:
        try:
            with collisions_as_conflicts(), self._writer.begin() as connection:
                taken = connection.execute(
                    update(LEASES)
                    .where(LEASES.c.name == name)
                    .where((LEASES.c.holder == holder) | (LEASES.c.expires_at <= now))
                    .values(holder=holder, expires_at=now + ttl)
                ).rowcount
                if taken:
                    return True
                exists = connection.execute(
                    select(LEASES.c.name).where(LEASES.c.name == name)
                ).first()
                if exists is not None:
                    return False
                connection.execute(
                    insert(LEASES).values(name=name, holder=holder, expires_at=now + ttl)
                )
                return True
        except (IntegrityError, ConflictError):
            return False  # another replica inserted it first


def _audit(reservation_id: str, status: Status, now: int, actor: str) -> AuditEntry:
    detail = {k: v for k, v in (("switch", status.switch), ("error", status.error)) if v}
    return AuditEntry(now, actor, reservation_id, "provisioning", None, status.phase.value, detail)
