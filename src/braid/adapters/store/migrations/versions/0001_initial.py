"""Initial schema: topology versions, links, reservations, paths, loads, users, audit.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Same 64-bit rule as the models: SQLite only auto-increments INTEGER keys.
_BIG_KEY = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "topology_versions",
        sa.Column("version", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("version", name="pk_topology_versions"),
    )
    op.create_table(
        "links",
        sa.Column("id", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_links"),
    )
    _reservations()
    _paths_and_loads()
    _users_and_tokens()
    _audit_and_state()


def _reservations() -> None:
    op.create_table(
        "reservations",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("token", sa.String(), nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("state", sa.String(), nullable=False),
        sa.Column("src", sa.String(), nullable=False),
        sa.Column("dst", sa.String(), nullable=False),
        sa.Column("start", sa.BigInteger(), nullable=False),
        sa.Column("end", sa.BigInteger(), nullable=False),
        sa.Column("symmetric", sa.Boolean(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("hold_expires_at", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_reservations"),
        sa.UniqueConstraint("token", name="uq_reservations_token"),
    )
    op.create_index("ix_reservations_owner", "reservations", ["owner"])
    op.create_index("ix_reservations_state", "reservations", ["state"])
    op.create_index("ix_reservations_seq", "reservations", ["seq"])
    op.create_index("ix_reservations_start_end", "reservations", ["start", "end"])


def _paths_and_loads() -> None:
    op.create_table(
        "reservation_paths",
        sa.Column("reservation_id", sa.String(), nullable=False),
        sa.Column("index", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("nodes", sa.JSON(), nullable=False),
        sa.Column("links", sa.JSON(), nullable=False),
        sa.Column("bandwidth", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["reservation_id"],
            ["reservations.id"],
            name="fk_reservation_paths_reservation_id_reservations",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("reservation_id", "index", name="pk_reservation_paths"),
    )
    op.create_table(
        "link_loads",
        sa.Column("id", _BIG_KEY, autoincrement=True, nullable=False),
        sa.Column("reservation_id", sa.String(), nullable=False),
        sa.Column("link_id", sa.String(), nullable=False),
        sa.Column("forward", sa.Boolean(), nullable=False),
        sa.Column("start", sa.BigInteger(), nullable=False),
        sa.Column("end", sa.BigInteger(), nullable=False),
        sa.Column("bandwidth", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["reservation_id"],
            ["reservations.id"],
            name="fk_link_loads_reservation_id_reservations",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_link_loads"),
    )
    op.create_index("ix_link_loads_reservation_id", "link_loads", ["reservation_id"])
    op.create_index("ix_link_loads_link_id_start_end", "link_loads", ["link_id", "start", "end"])


def _users_and_tokens() -> None:
    op.create_table(
        "users",
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("role", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_users"),
    )
    op.create_table(
        "tokens",
        sa.Column("hash", sa.String(), nullable=False),
        sa.Column("user_name", sa.String(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["user_name"], ["users.name"], name="fk_tokens_user_name_users"),
        sa.PrimaryKeyConstraint("hash", name="pk_tokens"),
    )
    op.create_index("ix_tokens_user_name", "tokens", ["user_name"])


def _audit_and_state() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", _BIG_KEY, autoincrement=True, nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(), nullable=False),
        sa.Column("reservation_id", sa.String(), nullable=True),
        sa.Column("action", sa.String(), nullable=False),
        sa.Column("from_state", sa.String(), nullable=True),
        sa.Column("to_state", sa.String(), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_log"),
    )
    op.create_index("ix_audit_log_reservation_id", "audit_log", ["reservation_id"])
    state = op.create_table(
        "state",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("topology_version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_state"),
    )
    # The single row starts at 0 for both: nothing written, no topology yet.
    op.bulk_insert(state, [{"id": 1, "seq": 0, "topology_version": 0}])


def downgrade() -> None:
    for table in (
        "state",
        "audit_log",
        "tokens",
        "users",
        "link_loads",
        "reservation_paths",
        "reservations",
        "links",
        "topology_versions",
    ):
        op.drop_table(table)
