"""`CursorListener`: a replica hears each new change cursor from PostgreSQL (LISTEN/NOTIFY).

A trigger on the `state` row (migration 0003) sends every new cursor value
on `CHANNEL` when its transaction commits. One thread per repository keeps
its own connection listening and records the highest value heard; the
repository adds the cursor values of its own committed writes, with the
(id, version) of each reservation they wrote. The mirror (braid.app.reservations.mirror)
then reads the store only when something it has not learnt lies past its
cursor.

While the connection is down no value can be trusted (notifications sent
meanwhile are lost), so `news` answers None and the mirror reads the store
before every decision. Each (re)connection starts a new epoch: LISTEN is in
force before the epoch begins, so a reader that reads the store once after
seeing the new epoch misses nothing.

PostgreSQL keeps every notification until each listener has read it, so a
replica frozen with its connection open would make the queue grow until
commits fail. The listener pings its connection every `PING_SECONDS`, and
asks the server to end the session when it has been idle for
`IDLE_SESSION_SECONDS` (`idle_session_timeout`): a frozen replica stops
pinging and its session, with its LISTEN, goes; when it wakes up it
reconnects in a new epoch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

from sqlalchemy import Engine

from braid.app.ports import FeedNews, Written

log = logging.getLogger(__name__)

# Must equal the channel of migration 0003's trigger.
CHANNEL: Final = "braid_cursor"
# How long the listener waits for a notification before looking at its stop flag.
POLL_SECONDS: Final = 0.25
# The connection is checked this often, so a dead one is noticed and replaced
# and the server sees the session is alive.
PING_SECONDS: Final = 5.0
# The server ends a listening session idle (no ping) for this long.
IDLE_SESSION_SECONDS: Final = 30
# Reconnection attempts back off up to this.
MAX_RETRY_SECONDS: Final = 5.0
# Beyond this many unread own writes (no reader consuming them), forget them:
# a reader then reads the store, which is always safe.
_WRITTEN_LIMIT: Final = 10_000
# A gap this wide past a reader's cursor is not looked at entry by entry.
_SCAN_LIMIT: Final = 1_000

# Opens a psycopg connection in autocommit mode (the caller closes it).
Connect = Callable[[], Any]


def engine_connector(engine: Engine) -> Connect:
    """Connections made like the engine's own, but outside its pool."""

    def connect() -> Any:
        import psycopg

        url = engine.url.set(drivername="postgresql")
        return psycopg.connect(url.render_as_string(hide_password=False), autocommit=True)

    return connect


def start_listening(connection: Any, idle_session_seconds: int) -> None:
    """LISTEN on a connection the server ends once it has been idle `idle_session_seconds`."""
    connection.execute(f"SET idle_session_timeout = '{int(idle_session_seconds)}s'")
    connection.execute(f"LISTEN {CHANNEL}")


def supports_notifications(engine: Engine) -> bool:
    """PostgreSQL through psycopg (version 3): the driver whose notifications we read."""
    return engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg"


class CursorListener:
    """A `braid.app.ports.ChangeFeed` over PostgreSQL's LISTEN/NOTIFY."""

    def __init__(
        self,
        connect: Connect,
        *,
        retry_seconds: float = 0.5,
        idle_session_seconds: int = IDLE_SESSION_SECONDS,
    ) -> None:
        self._connect = connect
        self._retry_seconds = retry_seconds
        self._idle_session_seconds = idle_session_seconds
        self._lock = threading.Lock()
        self._epoch = 0
        self._listening = False
        self._heard = 0
        self._written: dict[int, frozenset[tuple[str, int]]] = {}
        self._written_max = 0
        self._forgotten_through = 0  # own writes at or before this were dropped
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.backend_pid: int | None = None  # of the listening connection (for tests)

    # -- ChangeFeed ----------------------------------------------------------
    def start(self) -> None:
        """Start listening in a thread of its own (once; later calls do nothing)."""
        if self._thread is not None:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="braid-cursor-listener", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop listening and close the connection; `news` answers None from now on."""
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=POLL_SECONDS * 8 + 1)
        with self._lock:
            self._listening = False

    def news(self, since: int) -> FeedNews | None:
        """See `ChangeFeed.news`; forgets own writes at or before `since` (one reader)."""
        with self._lock:
            if not self._listening:
                return None
            if since > self._forgotten_through:
                self._written = {s: w for s, w in self._written.items() if s > since}
                self._forgotten_through = since
            latest = max(self._heard, self._written_max)
            written: Mapping[int, frozenset[tuple[str, int]]] = {}
            if self._written and latest - since <= _SCAN_LIMIT:
                written = dict(self._written)
            return FeedNews(self._epoch, latest, written)

    # -- fed by the repository -------------------------------------------------
    def wrote(self, written: Written) -> None:
        """Cursor values this process's writes committed, each with what it wrote."""
        with self._lock:
            if len(self._written) + len(written) > _WRITTEN_LIMIT:
                self._written.clear()
            for seq, pairs in written.items():
                self._written[seq] = frozenset(pairs)
                self._written_max = max(self._written_max, seq)

    # -- the listening thread ----------------------------------------------------
    def _run(self) -> None:
        delay = self._retry_seconds
        while not self._stopping.is_set():
            epoch = self._epoch
            try:
                self._listen_once()
            except Exception as exc:  # the driver's errors: server gone, connection lost
                log.warning("change listener lost its connection (%s); retrying", exc)
            finally:
                with self._lock:
                    self._listening = False
            if self._epoch != epoch:
                delay = self._retry_seconds  # it did connect: start backing off afresh
            if self._stopping.wait(delay):
                return
            delay = min(delay * 2, MAX_RETRY_SECONDS)

    def _listen_once(self) -> None:
        connection = self._connect()
        try:
            start_listening(connection, self._idle_session_seconds)
            self.backend_pid = connection.info.backend_pid
            with self._lock:
                # LISTEN is in force: whatever commits from now on is heard.
                self._epoch += 1
                self._listening = True
            self._receive(connection)
        finally:
            connection.close()

    def _receive(self, connection: Any) -> None:
        pinged = time.monotonic()
        while not self._stopping.is_set():
            for note in connection.notifies(timeout=POLL_SECONDS):
                self._hear(note.payload)  # at once: a reader may be waiting for it
            # Even while notifications flow: receiving them is not activity
            # to the server, and a session without pings is ended as idle.
            if time.monotonic() - pinged >= PING_SECONDS:
                connection.execute("SELECT 1")  # raises if the connection is dead
                pinged = time.monotonic()

    def _hear(self, payload: str) -> None:
        if payload.isdigit():
            with self._lock:
                self._heard = max(self._heard, int(payload))
