"""Provisioning state per reservation, and the lease that lets one replica program switches.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIG = sa.BigInteger()


def upgrade() -> None:
    op.create_table(
        "provisioning",
        sa.Column("reservation_id", sa.String(), nullable=False),
        sa.Column("phase", sa.String(), nullable=False),
        sa.Column("switch", sa.String(), nullable=True),
        sa.Column("error", sa.String(), nullable=True),
        sa.Column("since", _BIG, nullable=False),
        sa.PrimaryKeyConstraint("reservation_id", name="pk_provisioning"),
    )
    op.create_table(
        "leases",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        sa.Column("expires_at", _BIG, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_leases"),
    )


def downgrade() -> None:
    op.drop_table("leases")
    op.drop_table("provisioning")
