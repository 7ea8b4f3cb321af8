"""PostgreSQL tells listening replicas each new change cursor (LISTEN/NOTIFY).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23

A trigger on `state` sends the new `seq` on the channel `braid_cursor`
whenever a writer bumps it, so no writer can forget to. PostgreSQL delivers
a notification when (and only if) its transaction commits, so a listener
never hears of a change it could not read yet. SQLite has no notifications:
nothing changes there.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Must equal braid.adapters.store.notify.CHANNEL (migrations do not import the app).
_CHANNEL = "braid_cursor"

_FUNCTION = f"""
CREATE FUNCTION braid_notify_cursor() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('{_CHANNEL}', NEW.seq::text);
    RETURN NULL;
END
$$
"""

_TRIGGER = """
CREATE TRIGGER state_cursor_notify AFTER UPDATE OF seq ON state
FOR EACH ROW WHEN (NEW.seq IS DISTINCT FROM OLD.seq)
EXECUTE FUNCTION braid_notify_cursor()
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_FUNCTION)
    op.execute(_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS state_cursor_notify ON state")
    op.execute("DROP FUNCTION IF EXISTS braid_notify_cursor()")
