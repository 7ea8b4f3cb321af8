"""The tables of the SQL store, as typed SQLAlchemy models.

The models only describe the schema: the repository reads and writes them
with explicit statements (so the locking SQL is visible), and Alembic's
migrations (`0001_initial` and later) create exactly this metadata (a test compares them).

There is no separate "holds" table: a hold is a row of `reservations` in state
`held` whose `hold_expires_at` says when it lapses if nobody confirms it.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Bandwidth in bit/s passes 2^31 at 2.1 Gbit/s and epoch seconds pass it in
# 2038, so both are 64-bit. SQLite only auto-increments an INTEGER primary key.
Big = BigInteger().with_variant(Integer(), "sqlite")

# Explicit constraint names keep migrations and metadata identical everywhere.
NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class TopologyVersionRow(Base):
    __tablename__ = "topology_versions"

    version: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[int] = mapped_column(BigInteger)
    actor: Mapped[str] = mapped_column(String)


class LinkRow(Base):
    """One row per link id ever put in a topology: the target of the write locks."""

    __tablename__ = "links"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    # The longest load (end - start, seconds) ever stored on the link, only
    # ever raised: a load overlapping a window that begins at b starts after
    # b - longest_load, so a write's check reads loads from there on, not the
    # link's whole history. Raised in the transaction that stores the load.
    longest_load: Mapped[int] = mapped_column(BigInteger, server_default="0")


class ReservationRow(Base):
    __tablename__ = "reservations"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    token: Mapped[str] = mapped_column(String, unique=True)
    owner: Mapped[str] = mapped_column(String, index=True)
    state: Mapped[str] = mapped_column(String, index=True)
    src: Mapped[str] = mapped_column(String)
    dst: Mapped[str] = mapped_column(String)
    start: Mapped[int] = mapped_column(BigInteger)
    end: Mapped[int] = mapped_column(BigInteger)
    symmetric: Mapped[bool] = mapped_column(Boolean)
    kind: Mapped[str] = mapped_column(String)
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    plan: Mapped[dict[str, Any]] = mapped_column(JSON)
    hold_expires_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    created_at: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = mapped_column(BigInteger)
    version: Mapped[int] = mapped_column(Integer)
    # Value of the change cursor when this row was last written.
    seq: Mapped[int] = mapped_column(BigInteger, index=True)
    # The Idempotency-Key the owner created it with, and the digest of that
    # request's body (migration 0008). Unique per owner (NULLs never clash):
    # a second booking under the key fails its insert, in its own transaction.
    idempotency_key: Mapped[str | None] = mapped_column(String, nullable=True)
    request_digest: Mapped[str | None] = mapped_column(String, nullable=True)

    __table_args__ = (
        Index(None, "start", "end"),
        Index(None, "owner", "idempotency_key", unique=True),
    )


class ReservationPathRow(Base):
    """One path of a reservation with the bandwidth (share) it carries."""

    __tablename__ = "reservation_paths"

    reservation_id: Mapped[str] = mapped_column(
        ForeignKey("reservations.id", ondelete="CASCADE"), primary_key=True
    )
    index: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    nodes: Mapped[list[str]] = mapped_column(JSON)
    links: Mapped[list[str]] = mapped_column(JSON)
    bandwidth: Mapped[int] = mapped_column(BigInteger)


class LinkLoadRow(Base):
    """Bandwidth one reservation puts on one link direction for [start, end)."""

    __tablename__ = "link_loads"

    id: Mapped[int] = mapped_column(Big, primary_key=True, autoincrement=True)
    reservation_id: Mapped[str] = mapped_column(
        ForeignKey("reservations.id", ondelete="CASCADE"), index=True
    )
    link_id: Mapped[str] = mapped_column(String)
    forward: Mapped[bool] = mapped_column(Boolean)
    start: Mapped[int] = mapped_column(BigInteger)
    end: Mapped[int] = mapped_column(BigInteger)
    bandwidth: Mapped[int] = mapped_column(BigInteger)
    # From this instant on the load no longer counts against capacity: the
    # hold's expiry, the booking's end, or 0 once cancelled/failed/expired/
    # finished. Kept with the load so a write's check reads only this table.
    counts_until: Mapped[int] = mapped_column(BigInteger, server_default="0")

    __table_args__ = (Index(None, "link_id", "start", "end"),)


class UserRow(Base):
    __tablename__ = "users"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    role: Mapped[str] = mapped_column(String)
    # An IANA zone name (migration 0009); NULL: the user set none.
    tz: Mapped[str | None] = mapped_column(String, nullable=True)


class TokenRow(Base):
    """An API token, known only by its hash."""

    __tablename__ = "tokens"

    hash: Mapped[str] = mapped_column(String, primary_key=True)
    user_name: Mapped[str] = mapped_column(ForeignKey("users.name"), index=True)
    created_at: Mapped[int] = mapped_column(BigInteger)
    # NULL: never expires / not revoked.
    expires_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


class AuditRow(Base):
    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Big, primary_key=True, autoincrement=True)
    at: Mapped[int] = mapped_column(BigInteger)
    actor: Mapped[str] = mapped_column(String)
    # No foreign key: the log outlives whatever it talks about.
    reservation_id: Mapped[str | None] = mapped_column(String, nullable=True, index=True)
    action: Mapped[str] = mapped_column(String)
    from_state: Mapped[str | None] = mapped_column(String, nullable=True)
    to_state: Mapped[str | None] = mapped_column(String, nullable=True)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)


class StateRow(Base):
    """The single row (id 1): the change cursor and the current topology version.

    Writers bump `seq` as their last statement; the row lock lasts until
    commit, so cursor values are handed out in commit order. A new topology
    takes the same lock to bump `topology_version`, so a writer that reads
    the version there can never miss a topology committed before it.
    """

    __tablename__ = "state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(BigInteger)
    topology_version: Mapped[int] = mapped_column(Integer)


class ProvisioningRow(Base):
    """A reservation's provisioning state: what the switches hold of it (see core.provisioning).

    Kept apart from `reservations` so that a pass of the provisioner never
    bumps a reservation's version or the change cursor.
    """

    __tablename__ = "provisioning"

    reservation_id: Mapped[str] = mapped_column(String, primary_key=True)
    phase: Mapped[str] = mapped_column(String)
    switch: Mapped[str | None] = mapped_column(String, nullable=True)
    error: Mapped[str | None] = mapped_column(String, nullable=True)
    since: Mapped[int] = mapped_column(BigInteger)
    verified: Mapped[bool | None] = mapped_column(Boolean, nullable=True)  # circuit check
    circuit_check: Mapped[str | None] = mapped_column(String, nullable=True)


class LeaseRow(Base):
    """Who may act on the switches (`name` "provisioner"): one replica at a time, until
    `expires_at` unless it renews."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String, primary_key=True)
    holder: Mapped[str] = mapped_column(String)
    expires_at: Mapped[int] = mapped_column(BigInteger)


class NsiConnectionRow(Base):
    """An NSI connection (`braid.app.nsi`): its id is also its reservation's id.

    `data` holds the request's criteria, the three NSI states and the edge
    VLANs as JSON (see `adapters.store.nsi`); `version` guards each change.
    """

    __tablename__ = "nsi_connections"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    requester_nsa: Mapped[str] = mapped_column(String, index=True)
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    version: Mapped[int] = mapped_column(Integer)
