"""Tokens that expire and can be revoked.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Nullable, so existing tokens stay valid: no expiry, not revoked.
    op.add_column("tokens", sa.Column("expires_at", sa.BigInteger(), nullable=True))
    op.add_column("tokens", sa.Column("revoked_at", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    # SQLite drops columns only by rebuilding the table: batch mode does that.
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("revoked_at")
        batch.drop_column("expires_at")
