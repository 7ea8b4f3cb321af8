"""A Commit's rule plans in an agent's store: as the protobuf they came in, and older JSON."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.adapters.rpc.switch_plans import WirePlans, plan_to_pb
from braid.core.negotiation.result_rules import SwitchPlan, SwitchRule, Way

# Ports are abstract numbers; a way's weight is its share in a select group.
PLANS = (
    SwitchPlan("rn1", "rn1-sdx", 7, (SwitchRule(1, 100, (Way(2, 1000, 1), Way(3, 1100, 2))),)),
    SwitchPlan("rn1", "rn1-sdx", 7, (SwitchRule(2, 1000, (Way(1, 100, 1),)),)),
)
OTHER = SwitchPlan("re1", "re1-west", 9, (SwitchRule(1, 1000, (Way(2, 5, 1),)),))


def test_plans_as_they_came_are_stored_unread_and_read_back_whole(tmp_path: Path) -> None:
    wire = WirePlans([plan_to_pb(p) for p in (*PLANS, OTHER)], "rn1")
    assert len(wire) == 2 and wire._plans is None  # this domain's two, not decoded yet
    store = SqliteHoldStore(tmp_path / "holds.db")
    store.write([], [], {"tx1": wire})
    assert wire._plans is None  # stored as they came
    store.close()
    again = SqliteHoldStore(tmp_path / "holds.db")
    assert dict(again.load_rules()) == {"tx1": PLANS}
    again.close()
    assert tuple(wire) == PLANS and wire[1] == PLANS[1]


def test_plans_given_as_values_are_stored_alike(tmp_path: Path) -> None:
    store = SqliteHoldStore(tmp_path / "holds.db")
    store.write([], [], {"tx1": PLANS})
    assert dict(store.load_rules()) == {"tx1": PLANS}
    store.close()


def test_rules_an_older_agent_wrote_as_json_still_load(tmp_path: Path) -> None:
    store = SqliteHoldStore(tmp_path / "holds.db")
    store.close()
    text = json.dumps(
        [[p.domain, p.switch, p.dpid, [[r.in_port, r.vlan, [[w.port, w.vlan, w.weight]
          for w in r.ways]] for r in p.rules]] for p in PLANS]
    )  # fmt: skip
    with sqlite3.connect(tmp_path / "holds.db") as db:
        db.execute("INSERT INTO agent_rules VALUES (?, ?)", ("old", text))
    again = SqliteHoldStore(tmp_path / "holds.db")
    assert dict(again.load_rules()) == {"old": PLANS}
    again.close()
