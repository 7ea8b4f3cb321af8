"""A degraded delivery's audit entry lands in the store's audit log, beside the others."""

from __future__ import annotations

from pathlib import Path

from braid.adapters.store import SqlRepository, open_repository
from braid.bootstrap.delivery import delivery_audit


def test_the_entry_is_read_back_with_the_reservations_audit(tmp_path: Path) -> None:
    repo = open_repository(f"sqlite:///{tmp_path}/b.db")
    try:
        assert isinstance(repo, SqlRepository)
        audit = delivery_audit(repo)
        detail = {"delivery": "degraded", "direction": "h1 -> h2", "delivered_mbps": 1.5}
        audit.degraded("r-1", detail, now=1_900_000_000, actor="braid")
        [entry] = repo.audit("r-1")
        assert (entry.at, entry.actor, entry.action) == (1_900_000_000, "braid", "delivery")
        assert dict(entry.detail) == detail
    finally:
        repo.close()
