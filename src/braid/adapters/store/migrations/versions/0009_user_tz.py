"""Users keep a time zone setting: the IANA zone their local times are read in.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03

A request with a local time and no zone (`2026-12-04 17:00`) is read in the
user's `tz`; NULL (every existing user) means none is set, so such a time is
refused with the hint to add an offset or a zone. Plain ADD COLUMN, as in
0008: SQLite adds a nullable column in place.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("users", sa.Column("tz", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("tz")
