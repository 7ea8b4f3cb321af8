"""Loads say until when they count, so a write's check reads no reservation rows.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23

`link_loads.counts_until` is the instant from which a load no longer counts
against capacity: a hold's expiry (or never, for a hold without one), a
booking's end, 0 once the reservation is cancelled, failed, expired or
finished. Existing rows get it from their reservation.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Must equal braid.adapters.store.codec.NEVER (migrations do not import the app).
_NEVER = 2**62

_BACKFILL = f"""
UPDATE link_loads SET counts_until = (
    SELECT CASE
        WHEN r.state = 'held' THEN COALESCE(r.hold_expires_at, {_NEVER})
        WHEN r.state IN ('reserved', 'active') THEN r."end"
        ELSE 0
    END
    FROM reservations AS r WHERE r.id = link_loads.reservation_id
)
"""


def upgrade() -> None:
    with op.batch_alter_table("link_loads") as batch:
        batch.add_column(
            sa.Column("counts_until", sa.BigInteger(), nullable=False, server_default="0")
        )
    op.execute(_BACKFILL)


def downgrade() -> None:
    with op.batch_alter_table("link_loads") as batch:
        batch.drop_column("counts_until")
