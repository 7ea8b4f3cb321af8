"""NSI connections (braid as an NSI CS 2.0 provider).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "nsi_connections",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("requester_nsa", sa.String(), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_nsi_connections"),
    )
    op.create_index(
        "ix_nsi_connections_requester_nsa", "nsi_connections", ["requester_nsa"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_nsi_connections_requester_nsa", table_name="nsi_connections")
    op.drop_table("nsi_connections")
