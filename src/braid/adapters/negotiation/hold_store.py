"""The agent's own durable table of holds (SQLite, write-ahead log).

Every change of a hold is written here before the agent answers, so a
restarted agent rebuilds exactly the holds and bookings it had promised. With
`synchronous="FULL"` (the default) each write is on disk before the answer: a
yes vote, a commit or a release survives the loss of the machine, not only of
the agent's process (`NORMAL`: only of the process).
Kept apart from the reservation store: an agent records transactions of an
orchestrator, not reservations of users.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path as FilePath
from typing import Any

import orjson

from braid.adapters.rpc.switch_plans import WirePlans, plan_to_pb, plans_from_wire
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.core.model.booking import Allocation, Booking
from braid.core.model.paths import Path
from braid.core.negotiation.holds import Hold, HoldState, SegmentAsk, VlanPick
from braid.core.negotiation.result_rules import SwitchPlan, SwitchRule, Way

_SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_holds (
    transaction_id TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    state TEXT NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    symmetric INTEGER NOT NULL,
    body TEXT NOT NULL
)
"""
# The rules a Commit brought for this domain's switches (abstract ports): the
# Commit's protobuf holding only them (a BLOB; JSON text from older agents).
_RULES = """
CREATE TABLE IF NOT EXISTS agent_rules (
    transaction_id TEXT PRIMARY KEY,
    body TEXT NOT NULL
)
"""


_HOLD_ROW = "INSERT OR REPLACE INTO agent_holds VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_HOLD_STATE = "UPDATE agent_holds SET state = ? WHERE transaction_id = ?"
_RULES_ROW = "INSERT OR REPLACE INTO agent_rules VALUES (?, ?)"


SYNC_LEVELS = ("FULL", "NORMAL")


class SqliteHoldStore:
    def __init__(self, path: FilePath | str, *, synchronous: str = "FULL") -> None:
        if synchronous not in SYNC_LEVELS:
            raise ValueError(f"synchronous must be one of {', '.join(SYNC_LEVELS)}")
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(f"PRAGMA synchronous={synchronous}")
        self._db.execute(_SCHEMA)
        self._db.execute(_RULES)

    def save(self, *holds: Hold) -> None:
        """Write the holds (whole rows) in one transaction."""
        self.write(holds, ())

    def write(
        self,
        whole: Sequence[Hold],
        states: Sequence[Hold],
        rules: Mapping[str, Sequence[SwitchPlan]] | None = None,
    ) -> None:
        """One transaction: new holds as whole rows, and only the state of known ones.

        A Commit, Abort or expiry changes nothing of a hold but its state, so
        its row is not encoded again.
        """
        rows = [_row(h) for h in whole]
        changed = [(h.state.value, h.transaction) for h in states]
        plans = [(tx, _plans_body(p)) for tx, p in (rules or {}).items()]
        writes = [
            (sql, params)
            for sql, params in ((_HOLD_ROW, rows), (_HOLD_STATE, changed), (_RULES_ROW, plans))
            if params
        ]
        if len(writes) == 1 and len(writes[0][1]) == 1:  # one statement is its own transaction
            self._db.execute(writes[0][0], writes[0][1][0])
            return
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            for sql, params in writes:
                self._db.executemany(sql, params)

    def load(self) -> Iterator[Hold]:
        for row in self._db.execute("SELECT * FROM agent_holds ORDER BY rowid"):
            yield _hold(row)

    def load_rules(self) -> Iterator[tuple[str, tuple[SwitchPlan, ...]]]:
        for transaction, text in self._db.execute("SELECT * FROM agent_rules ORDER BY rowid"):
            yield transaction, _plans(text)

    def close(self) -> None:
        self._db.close()


def _row(hold: Hold) -> tuple[Any, ...]:
    body = {
        "segments": [[s.entry, s.exit, s.bandwidth, s.path_index] for s in hold.segments],
        "allocations": [
            [[list(a.path.nodes), list(a.path.links), a.bandwidth] for a in allocations]
            for allocations in hold.allocations
        ],
        "vlans": [[v.link, v.vlan, v.path_index] for v in hold.vlans],
        "coordinator": hold.coordinator,
    }
    if hold.replaces:  # a modify's new version
        body["replaces"] = hold.replaces
    if hold.also_replaces:  # a volume step's further old steps
        body["also_replaces"] = list(hold.also_replaces)
    if hold.shares:  # held beside the old version: what it books beyond it
        body["shared"] = [
            [
                b.id,
                b.start,
                b.end,
                [[list(a.path.nodes), list(a.path.links), a.bandwidth] for a in b.allocations],
            ]
            for b in hold.shared
        ]
    return (
        hold.transaction,
        hold.token,
        hold.state.value,
        hold.start,
        hold.end,
        hold.expires_at,
        int(hold.symmetric),
        orjson.dumps(body).decode(),
    )


def _hold(row: tuple[Any, ...]) -> Hold:
    transaction, token, state, start, end, expires_at, symmetric, text = row
    body = json.loads(text)
    return Hold(
        transaction=transaction,
        token=token,
        state=HoldState(state),
        start=start,
        end=end,
        expires_at=expires_at,
        symmetric=bool(symmetric),
        segments=tuple(SegmentAsk(*s) for s in body["segments"]),
        allocations=tuple(
            tuple(Allocation(Path(tuple(n), tuple(links)), bw) for n, links, bw in allocations)
            for allocations in body["allocations"]
        ),
        vlans=tuple(VlanPick(*v) for v in body["vlans"]),
        coordinator=str(body.get("coordinator", "")),
        replaces=str(body.get("replaces", "")),
        also_replaces=tuple(str(t) for t in body.get("also_replaces", ())),
        shares="shared" in body,
        shared=tuple(
            Booking(
                booking_id,
                start,
                end,
                tuple(Allocation(Path(tuple(n), tuple(links)), bw) for n, links, bw in placed),
                symmetric=False,
            )
            for booking_id, start, end, placed in body.get("shared", ())
        ),
    )


def _plans_body(plans: Sequence[SwitchPlan]) -> bytes:
    """A Commit's plans as the protobuf they came in (a Commit holding only them)."""
    if isinstance(plans, WirePlans):
        return plans.wire  # as received: no need to read them
    return pb.Commit(switches=[plan_to_pb(p) for p in plans]).SerializeToString()


def _plans(body: bytes | str) -> tuple[SwitchPlan, ...]:
    if isinstance(body, bytes):
        return plans_from_wire(body)
    # Written as JSON by agents from before the plans were kept as protobuf.
    return tuple(
        SwitchPlan(
            domain,
            switch,
            int(dpid),
            tuple(
                SwitchRule(port, vlan, tuple(Way(*w) for w in ways)) for port, vlan, ways in rules
            ),
        )
        for domain, switch, dpid, rules in json.loads(body)
    )
