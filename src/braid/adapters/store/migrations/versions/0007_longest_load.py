"""Links keep the longest load stored on them, so the loads check is bounded.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25

A write checks the loads on its links that overlap its window. Without a
bound on how long a load may be, every load that starts before the window
ends had to be read, a number that grows with the store's history.
`links.longest_load` bounds it: a load overlapping a window that begins at b
starts after b - longest_load. Existing links get it from their loads; a
link that carries loads but has no row yet gets one.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_MISSING_LINKS = """
INSERT INTO links (id)
SELECT DISTINCT link_id FROM link_loads WHERE link_id NOT IN (SELECT id FROM links)
"""

_BACKFILL = """
UPDATE links SET longest_load = COALESCE(
    (SELECT MAX(l."end" - l.start) FROM link_loads AS l WHERE l.link_id = links.id), 0
)
"""


def upgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.add_column(
            sa.Column("longest_load", sa.BigInteger(), nullable=False, server_default="0")
        )
    op.execute(_MISSING_LINKS)
    op.execute(_BACKFILL)


def downgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.drop_column("longest_load")
