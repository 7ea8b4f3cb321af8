"""Reservations keep the Idempotency-Key they were created with, unique per owner.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02

A client that retries a POST it never got the answer to sends the same key:
the booking is found by (owner, key) instead of made twice, on any replica
and after any restart, because the key is stored in the row the booking
itself inserts. `request_digest` is the SHA-256 of the request's body, so
the same key with another body is refused. Existing rows have neither (NULLs
never clash in the unique index). Plain ADD COLUMN, not a batch copy: SQLite
adds a nullable column in place, and copying `reservations` would go through
the ON DELETE CASCADE of its paths and loads.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEX = "ix_reservations_owner_idempotency_key"


def upgrade() -> None:
    op.add_column("reservations", sa.Column("idempotency_key", sa.String(), nullable=True))
    op.add_column("reservations", sa.Column("request_digest", sa.String(), nullable=True))
    op.create_index(_INDEX, "reservations", ["owner", "idempotency_key"], unique=True)


def downgrade() -> None:
    op.drop_index(_INDEX, table_name="reservations")
    with op.batch_alter_table("reservations") as batch:
        batch.drop_column("request_digest")
        batch.drop_column("idempotency_key")
