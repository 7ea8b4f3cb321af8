"""Provisioning states keep the circuit check made after an install.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03

`verified` is true or false when the provisioner probed the reservation's
paths right after installing it, NULL when it did not (every existing row,
and switches that offer no check); `circuit_check` says what the probes found.
Plain ADD COLUMN, as in 0008: SQLite adds a nullable column in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("provisioning", sa.Column("verified", sa.Boolean(), nullable=True))
    op.add_column("provisioning", sa.Column("circuit_check", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("provisioning") as batch:
        batch.drop_column("circuit_check")
        batch.drop_column("verified")
