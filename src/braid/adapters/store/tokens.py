"""Statements of the SQL store about users' tokens: create, read, revoke."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import ColumnElement, Connection, insert, select, update
from sqlalchemy.exc import IntegrityError

from braid.adapters.store import writes
from braid.adapters.store.codec import TOKENS, USERS
from braid.app.errors import NotFoundError
from braid.app.ports import ConflictError
from braid.app.records import TokenInfo, User, token_entry, token_id


def add(
    connection: Connection,
    token_hash: str,
    user: User,
    *,
    now: int,
    expires_at: int | None,
    actor: str,
) -> TokenInfo:
    writes.insert_missing(connection, USERS, [{"name": user.name, "role": user.role}])
    connection.execute(update(USERS).where(USERS.c.name == user.name).values(role=user.role))
    known = select(TOKENS.c.hash).where(TOKENS.c.hash == token_hash)
    if connection.execute(known).first() is not None:
        raise ConflictError(["this token exists already"])
    row = {"hash": token_hash, "user_name": user.name, "created_at": now, "expires_at": expires_at}
    try:
        connection.execute(insert(TOKENS).values(**row))
    except IntegrityError as error:  # the same hash, added meanwhile elsewhere
        raise ConflictError(["this token exists already"]) from error
    info = TokenInfo(token_id(token_hash), user.name, user.role, now, expires_at)
    writes.log(connection, token_entry("token", info, now, actor))
    return info


def found(
    connection: Connection, where: Sequence[ColumnElement[bool]], *, lock: bool = False
) -> list[tuple[str, TokenInfo]]:
    """(hash, token) of tokens matching `where`, with their user's role, oldest first."""
    query = (
        select(TOKENS, USERS.c.role, USERS.c.tz)
        .select_from(TOKENS.join(USERS, TOKENS.c.user_name == USERS.c.name))
        .where(*where)
        .order_by(TOKENS.c.created_at, TOKENS.c.hash)
    )
    if lock:
        query = query.with_for_update(of=TOKENS)
    return [
        (
            row.hash,
            TokenInfo(
                token_id(row.hash),
                row.user_name,
                row.role,
                row.created_at,
                row.expires_at,
                row.revoked_at,
                row.tz,
            ),
        )
        for row in connection.execute(query)
    ]


def set_tz(connection: Connection, user: str, tz: str | None) -> None:
    """Set a user's time zone setting; an unknown user is refused, not created."""
    done = connection.execute(update(USERS).where(USERS.c.name == user).values(tz=tz))
    if done.rowcount == 0:
        raise NotFoundError(f"no user {user!r}")


def revoke(
    connection: Connection, *, now: int, actor: str, prefix: str, user: str | None
) -> list[TokenInfo]:
    """Revoke the unrevoked tokens whose hash starts with `prefix` (of `user`), audited."""
    where = [TOKENS.c.revoked_at.is_(None), TOKENS.c.hash.startswith(prefix, autoescape=True)]
    if user is not None:
        where.append(TOKENS.c.user_name == user)
    # Locked as read (PostgreSQL: FOR UPDATE; SQLite's writer holds the write
    # lock already), so the rows read are the rows updated and audited.
    chosen = found(connection, where, lock=True)
    if not chosen:
        return []
    hashes = [token_hash for token_hash, _ in chosen]
    connection.execute(update(TOKENS).where(TOKENS.c.hash.in_(hashes)).values(revoked_at=now))
    revoked = [replace(info, revoked_at=now) for _, info in chosen]
    for info in revoked:
        writes.log(connection, token_entry("token-revoked", info, now, actor))
    return revoked
