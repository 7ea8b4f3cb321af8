"""The SDX rule plan of a multi-domain reservation (seed 000 §4.3, Fig. 5).

Input: the composed reservation (domain paths and their amounts), the VLAN
ranges of the inter-domain links, and the switch of every SDX and of each
site's edge. Output: an abstract rule set per SDX/edge switch
(`braid.core.rules.model`); pushing it to switches is the southbound's job.
WAN domains are not programmed here: their own reservation systems carry a
path's VLAN from one border to the other (translating it if the two hops use
different VLANs).

Labels: every path gets its own VLAN on every inter-domain link it crosses,
the same VLAN end to end when one is free on all its links (so both edges
hold the same pool), otherwise the lowest free one per link. In ``sdx`` mode
the first and the last hop carry the whole reservation on one VLAN.

Rules, per switch and direction, keyed by what arrives (in_port, VLAN):

* an SDX *bridges*: a key used by one path gets "set the outbound VLAN,
  output on the outbound port"; a key used by several paths (in ``sdx`` mode
  the SDX where the paths part) gets a select group that *splits* the
  reservation over the outbound ports, buckets weighted by the paths'
  amounts; and every rule has its *mirror* for the reverse direction;
* in ``edge`` mode (flow-level splitting, Fig. 5) each site's edge switch
  gets the pool of VLANs, one per path, as a select group on its LAN port
  (push the path's VLAN, out of the WAN port), weighted by the amounts, and
  pops the VLAN of anything arriving on the WAN port. In ``sdx`` mode an edge,
  when given, pushes and pops the reservation's one VLAN.

Both edges, and in ``sdx`` mode both splitting SDXs, list the paths in the
same order with the same weights; the select groups choose a bucket with the
symmetric weighted 5-tuple hash (`braid.core.rules.flow_hash`), so a TCP flow
and its ACKs take the same path without the two ends ever talking.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from braid.core.errors import InputError
from braid.core.negotiation.strategies import DomainPath
from braid.core.rules import flow_hash
from braid.core.rules.compiler import bucket_weights
from braid.core.rules.labels import LabelPool, reservation_cookie
from braid.core.rules.model import (
    Action,
    Bucket,
    FlowRule,
    Group,
    GroupAction,
    GroupKind,
    Match,
    Output,
    PopVlan,
    PushVlan,
    RuleSet,
    SetVlan,
)

SDX_PRIORITY: Final = 2500
Mode = Literal["edge", "sdx"]
Hop = frozenset[str]  # an inter-domain link, named by the two domains it joins


@dataclass(frozen=True, slots=True)
class SdxSwitch:
    """An SDX's switch: its port towards each neighbouring domain."""

    domain: str
    switch: str
    dpid: int
    ports: Mapping[str, int] = field(hash=False)


@dataclass(frozen=True, slots=True)
class EdgeSwitch:
    """A site's edge switch (Fig. 5): LAN port to the site, WAN port towards its SDX."""

    domain: str
    switch: str
    dpid: int
    lan_port: int
    wan_port: int


@dataclass(frozen=True, slots=True)
class SdxRulePlan:
    """The plan: VLAN per path and hop, the edges' weighted pools, rules per switch."""

    reservation_id: str
    mode: Mode
    paths: tuple[DomainPath, ...]
    amounts: tuple[int, ...]
    vlans: tuple[tuple[int, ...], ...]
    weights: tuple[int, ...]
    group_ids: tuple[int, ...]
    rule_sets: tuple[RuleSet, ...]

    def edge_pool(self, site: str) -> tuple[int, ...]:
        """The VLAN per path at `site`'s edge (its hop to the first or last SDX), path order."""
        if site == self.paths[0][0]:
            return tuple(v[0] for v in self.vlans)
        if site == self.paths[0][-1]:
            return tuple(v[-1] for v in self.vlans)
        raise InputError("site", f"{site!r} is not an end of the reservation")


def edge_vlan(plan: SdxRulePlan, site: str, flow: flow_hash.FiveTuple) -> int:
    """The VLAN `site`'s edge gives `flow`: its path by the symmetric weighted hash."""
    return plan.edge_pool(site)[flow_hash.choose(flow, plan.weights)]


def plan_sdx_rules(
    reservation_id: str,
    paths: Sequence[DomainPath],
    amounts: Sequence[int],
    *,
    vlan_ranges: Mapping[Hop, range],
    sdxs: Mapping[str, SdxSwitch],
    edges: Mapping[str, EdgeSwitch] | None = None,
    mode: Mode = "edge",
    vlans_in_use: Mapping[Hop, frozenset[int]] | None = None,
    pool: LabelPool | None = None,
    chosen_vlans: Sequence[Sequence[int]] | None = None,
) -> SdxRulePlan:
    """The rules every SDX (and, in ``edge`` mode, both edges) need for this reservation.

    Paths with a zero amount are left out. `vlan_ranges` gives the VLANs an
    inter-domain link may use (keyed by the frozenset of its two domains);
    `vlans_in_use` those already taken there; `pool` the group ids already
    taken. Domains on the paths without an `SdxSwitch` (WANs) get no rules.
    `chosen_vlans` (one VLAN per hop, per path carrying bandwidth, in order)
    uses VLANs already picked — by the links' owners during a negotiation —
    instead of picking them here.
    """
    used = [(tuple(p), a) for p, a in zip(paths, amounts, strict=True) if a > 0]
    if not used:
        raise InputError("amounts", "no path carries any bandwidth")
    kept = tuple(p for p, _ in used)
    _check(kept, sdxs, edges or {}, mode)
    if chosen_vlans is None:
        vlans = assign_vlans(kept, vlan_ranges, vlans_in_use or {}, shared_ends=mode == "sdx")
    else:
        vlans = _checked_choice(kept, chosen_vlans)
    weights = bucket_weights([a for _, a in used])
    tables = _Tables(reservation_id, pool or LabelPool())
    for index, path in enumerate(kept):
        for position in range(1, len(path) - 1):
            sdx = sdxs.get(path[position])
            if sdx is not None:
                _bridge(tables, sdx, path, vlans[index], position, index)
    for site, end in ((kept[0][0], 0), (kept[0][-1], -1)):
        edge = (edges or {}).get(site)
        if edge is not None:
            # sdx mode: one VLAN at the ends, so the edge only tags and untags.
            labels = tuple(v[end] for v in vlans) if mode == "edge" else (vlans[0][end],)
            _edge(tables, edge, labels)
    rule_sets = tables.rule_sets(weights)
    return SdxRulePlan(
        reservation_id,
        mode,
        kept,
        tuple(a for _, a in used),
        vlans,
        weights,
        tuple(tables.group_ids),
        rule_sets,
    )


def assign_vlans(
    paths: Sequence[DomainPath],
    vlan_ranges: Mapping[Hop, range],
    in_use: Mapping[Hop, frozenset[int]],
    *,
    shared_ends: bool = False,
) -> tuple[tuple[int, ...], ...]:
    """A VLAN per path and hop: distinct per link, one end to end where possible.

    With `shared_ends` every path uses one common VLAN on the first hop and
    one on the last (the hops the whole reservation crosses undivided).
    """
    taken: dict[Hop, set[int]] = defaultdict(set)
    for hop, values in in_use.items():
        taken[hop] |= values
    fixed: dict[int, int] = {}
    if shared_ends:
        for end in (0, -1):
            hop = _hops(paths[0])[end]
            fixed[end] = _free_on(vlan_ranges, taken, hop)
            taken[hop].add(fixed[end])
    result = []
    for path in paths:
        hops = _hops(path)
        inner = [h for i, h in enumerate(hops) if not (shared_ends and i in (0, len(hops) - 1))]
        common = _free_on_all(vlan_ranges, taken, inner) if inner else None
        chosen = []
        for i, hop in enumerate(hops):
            if shared_ends and i in (0, len(hops) - 1):
                chosen.append(fixed[0 if i == 0 else -1])
                continue
            vlan = common if common is not None else _free_on(vlan_ranges, taken, hop)
            taken[hop].add(vlan)
            chosen.append(vlan)
        result.append(tuple(chosen))
    return tuple(result)


def _checked_choice(
    paths: Sequence[DomainPath], chosen: Sequence[Sequence[int]]
) -> tuple[tuple[int, ...], ...]:
    if len(chosen) != len(paths):
        raise InputError("chosen_vlans", f"one entry per path: {len(paths)}, got {len(chosen)}")
    for i, (path, vlans) in enumerate(zip(paths, chosen, strict=True)):
        if len(vlans) != len(path) - 1 or not all(1 <= v <= 4094 for v in vlans):
            raise InputError(f"chosen_vlans[{i}]", "one VLAN (1-4094) per hop of the path")
    return tuple(tuple(v) for v in chosen)


def _hops(path: DomainPath) -> list[Hop]:
    return [frozenset(pair) for pair in itertools.pairwise(path)]


def _free_on_all(
    ranges: Mapping[Hop, range], taken: Mapping[Hop, set[int]], hops: Sequence[Hop]
) -> int | None:
    """The lowest VLAN that every link of `hops` allows and has free, if any."""
    for hop in hops:
        if hop not in ranges:
            raise InputError("vlan_ranges", f"no VLAN range for the link {'-'.join(sorted(hop))}")
    for vlan in ranges[hops[0]]:
        if all(vlan in ranges[h] and vlan not in taken.get(h, ()) for h in hops):
            return vlan
    return None


def _free_on(ranges: Mapping[Hop, range], taken: Mapping[Hop, set[int]], hop: Hop) -> int:
    vlan = _free_on_all(ranges, taken, [hop])
    if vlan is None:
        raise InputError("vlan_ranges", f"no free VLAN left on the link {'-'.join(sorted(hop))}")
    return vlan


# -- rule building -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Leg:
    """What one path does at one switch in one direction."""

    path: int
    out_port: int
    set_vlan: int | None  # None: leave the tag as it is
    push: bool = False
    pop: bool = False

    def actions(self) -> tuple[Action, ...]:
        if self.pop:
            return (PopVlan(), Output(self.out_port))
        if self.set_vlan is None:
            return (Output(self.out_port),)
        tag: Action = PushVlan(self.set_vlan) if self.push else SetVlan(self.set_vlan)
        return (tag, Output(self.out_port))


class _Tables:
    """Legs gathered per (switch, arriving key); turned into rules and groups at the end."""

    def __init__(self, reservation_id: str, pool: LabelPool) -> None:
        self.cookie = reservation_cookie(reservation_id)
        self.pool = pool
        self.dpids: dict[str, int] = {}
        self.legs: dict[tuple[str, int, int | None], list[_Leg]] = defaultdict(list)
        self.group_ids: list[int] = []

    def add(self, switch: str, dpid: int, in_port: int, vlan: int | None, leg: _Leg) -> None:
        self.dpids[switch] = dpid
        legs = self.legs[(switch, in_port, vlan)]
        if leg not in legs:
            legs.append(leg)

    def rule_sets(self, weights: Sequence[int]) -> tuple[RuleSet, ...]:
        splits = sum(1 for legs in self.legs.values() if len(legs) > 1)
        ids = iter(self.pool.take(0, splits)[1])
        flows: dict[str, list[FlowRule]] = defaultdict(list)
        groups: dict[str, list[Group]] = defaultdict(list)
        for (switch, in_port, vlan), legs in sorted(self.legs.items(), key=_key_order):
            match = Match(in_port=in_port, vlan_vid=vlan)
            if len(legs) == 1:
                actions = legs[0].actions()
            else:
                group_id = next(ids)
                self.group_ids.append(group_id)
                buckets = tuple(Bucket(leg.actions(), weights[leg.path]) for leg in legs)
                groups[switch].append(Group(group_id, GroupKind.SELECT, buckets))
                actions = (GroupAction(group_id),)
            flows[switch].append(FlowRule(SDX_PRIORITY, match, actions, self.cookie))
        return tuple(RuleSet.of(s, self.dpids[s], flows[s], groups[s]) for s in sorted(self.dpids))


def _key_order(item: tuple[tuple[str, int, int | None], list[_Leg]]) -> tuple[str, int, int]:
    (switch, port, vlan), _ = item
    return (switch, port, -1 if vlan is None else vlan)


def _bridge(
    tables: _Tables, sdx: SdxSwitch, path: DomainPath, vlans: Sequence[int], at: int, index: int
) -> None:
    """Forward rule and its mirror at the SDX in position `at` of `path`."""
    before, after = path[at - 1], path[at + 1]
    vlan_in, vlan_out = vlans[at - 1], vlans[at]
    port_in, port_out = _port(sdx, before), _port(sdx, after)
    change_out = None if vlan_in == vlan_out else vlan_out
    change_back = None if vlan_in == vlan_out else vlan_in
    tables.add(sdx.switch, sdx.dpid, port_in, vlan_in, _Leg(index, port_out, change_out))
    tables.add(sdx.switch, sdx.dpid, port_out, vlan_out, _Leg(index, port_in, change_back))


def _edge(tables: _Tables, edge: EdgeSwitch, pool: Sequence[int]) -> None:
    for index, vlan in enumerate(pool):
        push = _Leg(index, edge.wan_port, vlan, push=True)
        tables.add(edge.switch, edge.dpid, edge.lan_port, None, push)
        pop = _Leg(index, edge.lan_port, None, pop=True)
        tables.add(edge.switch, edge.dpid, edge.wan_port, vlan, pop)


def _port(sdx: SdxSwitch, neighbour: str) -> int:
    port = sdx.ports.get(neighbour)
    if port is None:
        raise InputError(f"sdxs[{sdx.domain}].ports", f"no port towards domain {neighbour!r}")
    return port


def _check(
    paths: Sequence[DomainPath],
    sdxs: Mapping[str, SdxSwitch],
    edges: Mapping[str, EdgeSwitch],
    mode: str,
) -> None:
    if mode not in ("edge", "sdx"):
        raise InputError("mode", f"must be edge or sdx, got {mode!r}")
    src, dst = paths[0][0], paths[0][-1]
    for i, path in enumerate(paths):
        if len(path) < 3 or path[0] != src or path[-1] != dst or len(set(path)) != len(path):
            raise InputError(f"paths[{i}]", f"must be a simple path {src} ... {dst} via a domain")
    if mode == "edge":
        missing = [site for site in (src, dst) if site not in edges]
        if missing:
            raise InputError("edges", f"edge mode needs the edge switch of site {missing[0]}")
    elif len({p[1] for p in paths}) > 1 or len({p[-2] for p in paths}) > 1:
        raise InputError("mode", "sdx mode needs every path through the same first and last SDX")
    for domain, sdx in sdxs.items():
        if sdx.domain != domain:
            raise InputError(f"sdxs[{domain}]", f"switch belongs to domain {sdx.domain!r}")
