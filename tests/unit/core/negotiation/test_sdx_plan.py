"""SDX rule plans: bridging, splitting, mirror rules, and flow-level splitting at the edges."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter

import pytest

from braid.core.errors import InputError
from braid.core.negotiation.sdx_plan import (
    EdgeSwitch,
    Hop,
    SdxRulePlan,
    SdxSwitch,
    assign_vlans,
    edge_vlan,
    plan_sdx_rules,
)
from braid.core.negotiation.strategies import DomainPath
from braid.core.rules.flow_hash import FiveTuple
from braid.core.rules.labels import LabelPool
from braid.testing.fake_switch import FakeSwitch, Packet

M = 1_000_000
TWO_WANS: list[DomainPath] = [("A", "RN1", "RE1", "RN2", "C"), ("A", "RN1", "RE2", "RN2", "C")]
DETOURS: list[DomainPath] = [
    ("A", "RN1", "RE1", "RN3", "RE2", "RN2", "C"),
    ("A", "RN1", "RE2", "RN3", "RE1", "RN2", "C"),
]
SDXS = {
    "RN1": SdxSwitch("RN1", "rn1", 1, {"A": 1, "RE1": 2, "RE2": 3}),
    "RN2": SdxSwitch("RN2", "rn2", 2, {"C": 1, "RE1": 2, "RE2": 3}),
    "RN3": SdxSwitch("RN3", "rn3", 3, {"RE1": 1, "RE2": 2}),
}
EDGES = {
    "A": EdgeSwitch("A", "edge-a", 10, lan_port=1, wan_port=2),
    "C": EdgeSwitch("C", "edge-c", 11, lan_port=1, wan_port=2),
}
LINKS = [
    ("A", "RN1"), ("C", "RN2"), ("RN1", "RE1"), ("RN1", "RE2"),
    ("RN2", "RE1"), ("RN2", "RE2"), ("RN3", "RE1"), ("RN3", "RE2"),
]  # fmt: skip
RANGES: dict[Hop, range] = {frozenset(link): range(100, 140) for link in LINKS}


def flows(count: int, seed: int) -> list[FiveTuple]:
    rnd = random.Random(seed)
    return [
        FiveTuple(
            f"10.1.{rnd.randrange(256)}.{rnd.randrange(1, 255)}",
            f"10.2.{rnd.randrange(256)}.{rnd.randrange(1, 255)}",
            6,
            rnd.randrange(1024, 65536),
            rnd.choice((2811, 50000, 443)),
        )
        for _ in range(count)
    ]


class FakeDomains:
    """The SDX and edge switches holding the plan, wired by domain; WANs carry a path's VLAN."""

    def __init__(self, plan: SdxRulePlan, edges: dict[str, EdgeSwitch] = EDGES) -> None:
        self.plan = plan
        self.edges = edges
        self.switches: dict[str, FakeSwitch] = {}
        names = {d: s.switch for d, s in SDXS.items()} | {d: e.switch for d, e in edges.items()}
        for domain, switch in names.items():
            self.switches[domain] = FakeSwitch(switch, 0)
        for rule_set in plan.rule_sets:
            domain = next(d for d, s in names.items() if s == rule_set.switch)
            self.switches[domain].apply(rule_set)

    def send(self, site: str, packet: Packet, *, tagged: bool = False) -> tuple[str, list[str]]:
        """Inject at `site` (from its LAN, or tagged onto its hop in sdx mode); (where, domains)."""
        here, came_from = site, "lan"
        if tagged:
            here = self.plan.paths[0][1] if site == "A" else self.plan.paths[0][-2]
            came_from = site
        seen = [here]
        for _ in range(20):
            here, came_from, packet = self._step(here, came_from, packet)
            if came_from == "delivered":
                return here, seen
            seen.append(here)
        raise AssertionError(f"loop: {seen}")

    def _step(self, here: str, came_from: str, packet: Packet) -> tuple[str, str, Packet]:
        if here in ("A", "C") and here not in self.edges:
            return here, "delivered", packet
        if here in self.edges:
            edge = self.edges[here]
            port = edge.lan_port if came_from == "lan" else edge.wan_port
            out, packet = self._one(here, dataclasses.replace(packet, in_port=port))
            if out == edge.lan_port:
                return here, "delivered", packet
            return self._neighbour_of_site(here), here, packet
        if here in SDXS:
            sdx = SDXS[here]
            out, packet = self._one(here, dataclasses.replace(packet, in_port=sdx.ports[came_from]))
            nxt = next(d for d, p in sdx.ports.items() if p == out)
            if nxt in ("A", "C") and nxt not in self.edges:
                return nxt, "delivered", packet
            return nxt, here, packet
        return self._wan(here, came_from, packet)

    def _one(self, domain: str, packet: Packet) -> tuple[int, Packet]:
        sent = self.switches[domain].process(packet)
        assert len(sent) == 1, f"{domain} sent {sent} for {packet}"
        return sent[0]

    def _neighbour_of_site(self, site: str) -> str:
        return self.plan.paths[0][1] if site == "A" else self.plan.paths[0][-2]

    def _wan(self, wan: str, came_from: str, packet: Packet) -> tuple[str, str, Packet]:
        for path, vlans in zip(self.plan.paths, self.plan.vlans, strict=True):
            at = path.index(wan) if wan in path else -1
            if at < 0:
                continue
            if path[at - 1] == came_from and vlans[at - 1] == packet.vlan:
                return path[at + 1], wan, dataclasses.replace(packet, vlan=vlans[at])
            if path[at + 1] == came_from and vlans[at] == packet.vlan:
                return path[at - 1], wan, dataclasses.replace(packet, vlan=vlans[at - 1])
        raise AssertionError(f"{wan} has no circuit for VLAN {packet.vlan} from {came_from}")


def packet(flow: FiveTuple, vlan: int | None = None) -> Packet:
    return Packet(
        in_port=0,
        ipv4_src=flow.src_ip,
        ipv4_dst=flow.dst_ip,
        ip_proto=flow.proto,
        tp_src=flow.src_port,
        tp_dst=flow.dst_port,
        vlan=vlan,
    )


def edge_plan(
    paths: list[DomainPath] = TWO_WANS, amounts: tuple[int, ...] = (700 * M, 300 * M)
) -> SdxRulePlan:
    return plan_sdx_rules(
        "r1", paths, amounts, vlan_ranges=RANGES, sdxs=SDXS, edges=EDGES, mode="edge"
    )


@pytest.mark.parametrize("paths", [TWO_WANS, DETOURS, [*TWO_WANS, *DETOURS]])
def test_a_flow_and_its_reverse_cross_the_same_domains(paths: list[DomainPath]) -> None:
    plan = edge_plan(paths, tuple(range(1, len(paths) + 1)))
    net = FakeDomains(plan)
    for flow in flows(150, seed=1):
        where, there = net.send("A", packet(flow))
        back, home = net.send("C", packet(flow.reversed()))
        assert (where, back) == ("C", "A")
        assert there[1:-1] == home[::-1][1:-1]


def test_both_edges_pick_the_same_vlan_for_a_flow_and_its_reverse() -> None:
    plan = edge_plan()
    assert plan.edge_pool("A") == plan.edge_pool("C")
    a_switch = FakeDomains(plan).switches["A"]
    for flow in flows(500, seed=2):
        vlan = edge_vlan(plan, "A", flow)
        assert vlan == edge_vlan(plan, "C", flow.reversed())
        sent = a_switch.process(dataclasses.replace(packet(flow), in_port=EDGES["A"].lan_port))
        assert sent == [
            (EDGES["A"].wan_port, dataclasses.replace(packet(flow), in_port=1, vlan=vlan))
        ]


def test_flows_follow_the_shares() -> None:
    plan = edge_plan(amounts=(700 * M, 300 * M))
    counts = Counter(edge_vlan(plan, "A", f) for f in flows(20_000, seed=3))
    first, second = plan.edge_pool("A")
    assert abs(counts[first] / 20_000 - 0.7) < 0.02
    assert abs(counts[second] / 20_000 - 0.3) < 0.02


def test_sdx_mode_splits_at_the_first_sdx_and_mirrors_at_the_last() -> None:
    plan = plan_sdx_rules(
        "r2", TWO_WANS, (500 * M, 500 * M), vlan_ranges=RANGES, sdxs=SDXS, mode="sdx"
    )
    first, last = plan.vlans[0][0], plan.vlans[0][-1]
    assert all(v[0] == first and v[-1] == last for v in plan.vlans)
    assert len(plan.group_ids) == 2  # the split at RN1 and its mirror at RN2
    net = FakeDomains(plan, edges={})
    crossed: Counter[str] = Counter()
    for flow in flows(300, seed=4):
        where, there = net.send("A", packet(flow, first), tagged=True)
        back, home = net.send("C", packet(flow.reversed(), last), tagged=True)
        assert (where, back) == ("C", "A")
        assert there[1] == home[1]
        crossed[there[1]] += 1
    assert set(crossed) == {"RE1", "RE2"}


def test_sdx_mode_edges_only_tag_and_untag() -> None:
    plan = plan_sdx_rules(
        "r4", TWO_WANS, (2 * M, M), vlan_ranges=RANGES, sdxs=SDXS, edges=EDGES, mode="sdx"
    )
    edge_a = next(r for r in plan.rule_sets if r.switch == "edge-a")
    assert not edge_a.groups and len(edge_a.flows) == 2
    net = FakeDomains(plan)
    crossed: Counter[str] = Counter()
    for flow in flows(200, seed=5):
        where, there = net.send("A", packet(flow))
        back, home = net.send("C", packet(flow.reversed()))
        assert (where, back, there[2]) == ("C", "A", home[-3])
        crossed[there[2]] += 1
    assert set(crossed) == {"RE1", "RE2"}


def test_unused_paths_are_left_out() -> None:
    plan = edge_plan(amounts=(0, 5 * M))
    assert plan.paths == (TWO_WANS[1],) and plan.weights == (1,)
    assert not plan.group_ids  # one path: plain rules, no select group


def test_vlans_are_distinct_per_link_and_avoid_those_in_use() -> None:
    paths = [*TWO_WANS, *DETOURS]
    in_use = {frozenset(("A", "RN1")): frozenset({100, 101})}
    vlans = assign_vlans(paths, RANGES, in_use)
    per_link: dict[Hop, list[int]] = {}
    for path, labels in zip(paths, vlans, strict=True):
        for pair, vlan in zip(itertools.pairwise(path), labels, strict=True):
            per_link.setdefault(frozenset(pair), []).append(vlan)
    for hop, used in per_link.items():
        assert len(used) == len(set(used))
        assert not set(used) & in_use.get(hop, frozenset())
    assert all(len(set(labels)) == 1 for labels in vlans)  # one VLAN end to end when free


def test_an_exhausted_link_is_a_clear_error() -> None:
    ranges = dict(RANGES) | {frozenset(("A", "RN1")): range(100, 101)}
    with pytest.raises(InputError, match="A-RN1"):
        assign_vlans(TWO_WANS, ranges, {})


def test_group_ids_come_from_the_pool() -> None:
    pool = LabelPool(groups_in_use=frozenset({0x0B7A_0000}))
    plan = plan_sdx_rules(
        "r3", TWO_WANS, (1, 1), vlan_ranges=RANGES, sdxs=SDXS, edges=EDGES, pool=pool
    )
    assert plan.group_ids and 0x0B7A_0000 not in plan.group_ids


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"mode": "packet"}, "mode"),
        ({"edges": {}}, "edges"),
        ({"amounts": (0, 0)}, "amounts"),
        ({"paths": [("A", "C"), TWO_WANS[0]], "amounts": (1, 1)}, "paths[0]"),
        ({"mode": "sdx", "paths": [TWO_WANS[0], ("A", "RN3", "RE1", "RN2", "C")]},
         "mode"),
        ({"sdxs": {"RN1": SdxSwitch("RN1", "rn1", 1, {"A": 1}), "RN2": SDXS["RN2"]}},
         "sdxs[RN1].ports"),
        ({"vlan_ranges": {}}, "vlan_ranges"),
    ],
)  # fmt: skip
def test_bad_input_names_the_field(changes: dict[str, object], field: str) -> None:
    args: dict[str, object] = {
        "paths": TWO_WANS,
        "amounts": (1, 1),
        "vlan_ranges": RANGES,
        "sdxs": SDXS,
        "edges": EDGES,
        "mode": "edge",
    } | changes
    paths, amounts = args.pop("paths"), args.pop("amounts")
    with pytest.raises(InputError) as info:
        plan_sdx_rules("bad", paths, amounts, **args)  # type: ignore[arg-type]
    assert info.value.field == field
