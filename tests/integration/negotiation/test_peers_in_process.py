"""The negotiator against in-process agents with peer policies and parallel border links.

Two parallel border links join site A to WAN w1, each with its own VLAN
range; the WAN owns them and picks the VLANs. Once the first link's range is
used up a reservation goes over the second; once both are, the refusal names
both links and their ranges, after the fewer-paths retry.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from braid.adapters.domain_files import load_multidomain
from braid.adapters.negotiation.decision_log import SqliteDecisionLog
from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.app.agent.messages import (
    AbortCall,
    CommitCall,
    OffersCall,
    PrepCall,
    ReleaseCall,
    Vote,
)
from braid.app.agent.peers import Caller
from braid.app.agent.service import AgentService
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import NegotiationRequest
from braid.core.errors import InputError
from braid.core.negotiation.holds import Hold, HoldState
from braid.core.negotiation.peers import PeerPolicy, peer_policy_from_dict
from braid.core.negotiation.result_rules import SwitchPlan
from tests.integration.negotiation.test_domain_southbound import NET
from tests.integration.negotiation.test_negotiator_in_process import FakePool

G = 10**9
EAST = Caller(("orch.east",), None)

PARALLEL = {
    "domains": [
        {"id": "site-a", "kind": "site"},
        {"id": "w1", "kind": "wan"},
        {"id": "site-b", "kind": "site"},
    ],
    "nodes": [
        {"id": "a-host", "domain": "site-a"},
        {"id": "a-edge", "domain": "site-a"},
        {"id": "w1-x", "domain": "w1"},
        {"id": "w1-y", "domain": "w1"},
        {"id": "b-edge", "domain": "site-b"},
        {"id": "b-host", "domain": "site-b"},
    ],
    "links": [
        {"id": "a-lan", "a": "a-host", "b": "a-edge", "capacity": "40G"},
        {"id": "b-lan", "a": "b-edge", "b": "b-host", "capacity": "40G"},
        {"id": "a-w1", "a": "a-edge", "b": "w1-x", "capacity": "10G", "vlans": "100-100"},
        {"id": "a-w1-2", "a": "a-edge", "b": "w1-x", "capacity": "10G", "vlans": "200-201"},
        {"id": "w1-b", "a": "w1-y", "b": "b-edge", "capacity": "40G", "vlans": "300-399"},
        {"id": "w1-core", "a": "w1-x", "b": "w1-y", "capacity": "40G"},
    ],
}


class AsPeer:
    """An agent service as the peer `caller` reaches it (what the gRPC servicer does)."""

    def __init__(self, service: AgentService, caller: Caller) -> None:
        self.service, self.caller = service, caller

    def _one(self, call: Any) -> Any:
        return self.service.exchange([call], self.caller)[0].value()

    def offers(self, call: OffersCall) -> list[int]:
        return cast(list[int], self._one(call))

    def prepare(self, call: PrepCall) -> Vote:
        return cast(Vote, self._one(call))

    def commit(self, tx: str, token: str, switches: Sequence[SwitchPlan] = ()) -> tuple[Hold, bool]:
        return cast(tuple[Hold, bool], self._one(CommitCall(tx, token, tuple(switches))))

    def abort(self, tx: str, token: str) -> tuple[Hold, bool]:
        return cast(tuple[Hold, bool], self._one(AbortCall(tx, token)))

    def release(self, tx: str, token: str) -> tuple[Hold, bool]:
        return cast(tuple[Hold, bool], self._one(ReleaseCall(tx, token)))


def _policy(data: object) -> PeerPolicy:
    def no_files(path: str, field: str) -> str:
        raise InputError(field, "no token files here")

    return peer_policy_from_dict(data, no_files)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[Any]:
    logs: list[SqliteDecisionLog] = []

    def make(
        policies: dict[str, PeerPolicy] | None = None,
        caller: Caller = EAST,
        net: dict[str, Any] = PARALLEL,
    ) -> tuple[Orchestrator, dict[str, AgentService]]:
        folder = tmp_path / f"w{len(logs)}"
        folder.mkdir()
        source = folder / "parallel.yaml"
        source.write_text(yaml.safe_dump(net))
        domains = load_multidomain(source)
        services = {
            d: AgentService(
                domains,
                d,
                SqliteHoldStore(folder / f"{d}.db"),
                policy=(policies or {}).get(d),
            )
            for d in domains.view.domains
        }
        pool = FakePool(cast(Any, {d: AsPeer(s, caller) for d, s in services.items()}))
        logs.append(SqliteDecisionLog(folder / "o.db", synchronous="NORMAL"))
        return Orchestrator(domains.view, pool, logs[-1]), services

    yield make
    for log in logs:
        log.close()


def request(rid: str, gbps: float, paths: int = 2, hours: int = 1) -> NegotiationRequest:
    start = int(time.time()) + 60
    return NegotiationRequest(
        rid, "site-a", "a-host", "site-b", "b-host", int(gbps * G), start, start + hours * 3600,
        "partial-offers", paths,
    )  # fmt: skip


def _nothing_held(services: dict[str, AgentService]) -> None:
    for domain, service in services.items():
        held = [h.transaction for h in service.status() if h.state is HoldState.HELD]
        assert held == [], domain


def test_a_parallel_link_carries_on_once_the_first_range_is_used_up(world: Any) -> None:
    orchestrator, services = world()
    links = []
    for rid in ("r1", "r2", "r3"):
        result = orchestrator.reserve(request(rid, 1))
        assert result.success, result.reason
        links += [link for p in result.paths for link, _ in p.vlans if link.startswith("a-w1")]
    assert sorted(links) == ["a-w1", "a-w1-2", "a-w1-2"]
    refused = orchestrator.reserve(request("r4", 1))
    assert not refused.success
    assert "w1 voted no: no free VLAN on link a-w1 in 100-100, a-w1-2 in 200-201" in refused.reason
    _nothing_held(services)


def test_a_split_needing_a_link_out_of_vlans_names_only_that_link(world: Any) -> None:
    orchestrator, services = world()
    assert orchestrator.reserve(request("r1", 1, paths=1)).success
    assert orchestrator.reserve(request("r2", 1, paths=1)).success
    # One of the two links has VLANs left: 15 Gbit/s needs both (10G each), so the
    # refusal names the link whose range is used up, and only that one.
    refused = orchestrator.reserve(request("big", 15))
    assert not refused.success
    assert re.fullmatch(
        r"w1 voted no: no free VLAN on link (a-w1 in 100-100|a-w1-2 in 200-201)", refused.reason
    ), refused.reason
    _nothing_held(services)


def test_two_paths_share_parallel_links_then_fewer_paths_then_the_cause(world: Any) -> None:
    """Site A meets SDX x1 over two parallel links of one VLAN each; two domain paths
    (one per WAN) leave x1. A two-path split takes one VLAN on each link; the next
    finds none, is tried again on one path, and its refusal names both ranges."""
    narrow = {**NET, "links": [dict(link) for link in NET["links"]]}
    (a_x1,) = [link for link in narrow["links"] if link["id"] == "a-x1"]
    a_x1["vlans"] = "150"
    narrow["links"].append({**a_x1, "id": "a-x1-2", "vlans": "160"})
    orchestrator, services = world(net=narrow)
    both = orchestrator.reserve(request("both", 12))  # more than one 10G WAN: two paths
    assert both.success, both.reason
    assert sorted(v for p in both.paths for v in p.vlans if v[0].startswith("a-x1")) == [
        ("a-x1", 150),
        ("a-x1-2", 160),
    ]
    refused = orchestrator.reserve(request("more", 2))
    assert not refused.success
    (retry,) = [e.text for e in refused.trace if e.phase == "retry"]
    assert retry.endswith("again with at most 1 path(s)")
    assert refused.reason == (
        "x1 voted no: no free VLAN on link a-x1 in 150-150, a-x1-2 in 160-160; "
        "with more paths: x1: no free VLAN on link a-x1 in 150-150, a-x1-2 in 160-160"
    )
    _nothing_held(services)


def test_a_peers_vlan_ranges_and_limits_hold_at_its_domain(world: Any) -> None:
    w1 = _policy(
        {
            "east": {
                "subjects": ["orch.east"],
                "max_bandwidth": "3G",
                "max_duration": "2h",
                "vlans": {"a-w1": "100", "a-w1-2": "201"},
            }
        }
    )
    orchestrator, services = world({"w1": w1})
    vlans = []
    for rid in ("r1", "r2"):
        result = orchestrator.reserve(request(rid, 1))
        assert result.success, result.reason
        vlans += [v for p in result.paths for link, v in p.vlans if link.startswith("a-w1")]
    assert sorted(vlans) == [100, 201]
    out = orchestrator.reserve(request("r3", 1))
    assert "no free VLAN on link a-w1 in 100-100, a-w1-2 in 201-201" in out.reason
    over = orchestrator.reserve(request("over", 4))
    assert not over.success
    assert "w1 voted no: policy max_bandwidth: 4 Gbit/s is more than the 3 Gbit/s" in over.reason
    long = orchestrator.reserve(request("long", 1, hours=3))
    assert "w1 refused: policy max_duration" in long.reason, long.reason
    _nothing_held(services)


def test_an_unknown_peer_is_refused_by_every_domain_with_a_policy(world: Any) -> None:
    known = _policy({"east": {"subjects": ["orch.east"]}})
    orchestrator, services = world(
        dict.fromkeys(("site-a", "w1", "site-b"), known), Caller(("orch.west",), None)
    )
    result = orchestrator.reserve(request("r1", 1))
    assert not result.success
    for domain in ("site-a", "w1", "site-b"):
        assert f"{domain} refused: policy peers" in result.reason, result.reason
    assert "(orch.west) names no known peer of domain w1" in result.reason
    _nothing_held(services)
    assert all(not s.status() for s in services.values())
