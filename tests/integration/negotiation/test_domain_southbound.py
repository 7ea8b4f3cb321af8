"""Each domain programs its own switches: a committed reservation's rules reach every
domain's fake switches through that domain's agent, and leave on cancel, at the end,
and never come for an aborted one. In-process: agent services, the orchestrator and
each agent's provisioning passes, stepped by hand."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from braid.adapters.domain_files import load_multidomain
from braid.adapters.negotiation.decision_log import SqliteDecisionLog
from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.adapters.wiring_files import wiring_from_dict
from braid.app.agent.service import AgentService
from braid.app.negotiation.modification import Modification
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import NegotiationRequest, NegotiationResult
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.provisioner import RulesProvisioner
from braid.bootstrap.agent_southbound import agent_plans
from braid.core.model.topology import topology_from_dict
from braid.core.negotiation.domains import MultiDomainNetwork, strip_domain_keys
from braid.core.negotiation.strategies import Strategy
from braid.core.rules.enforcement import Policing, meter_kbps
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_switch import Packet
from braid.testing.fake_tables import FakeSwitchTables
from tests.integration.negotiation.test_negotiator_in_process import FakePool

G = 10**9
LEAD = 5

# Site A behind SDX x1, two WANs, SDX x2 in front of site B: every 12 Gbit/s
# request splits over both 10 Gbit/s WAN cores, so both SDXs bridge two paths.
NET: dict[str, Any] = {
    "domains": [
        {"id": "site-a", "kind": "site", "agent": "127.0.0.1:1"},
        {"id": "x1", "kind": "sdx", "agent": "127.0.0.1:2"},
        {"id": "w1", "kind": "wan", "agent": "127.0.0.1:3"},
        {"id": "w2", "kind": "wan", "agent": "127.0.0.1:4"},
        {"id": "x2", "kind": "sdx", "agent": "127.0.0.1:5"},
        {"id": "site-b", "kind": "site", "agent": "127.0.0.1:6"},
    ],
    "nodes": [
        {"id": "a-host", "domain": "site-a"},
        {"id": "a-edge", "domain": "site-a"},
        {"id": "x1-sw", "domain": "x1"},
        {"id": "w1-x", "domain": "w1"},
        {"id": "w1-y", "domain": "w1"},
        {"id": "w2-x", "domain": "w2"},
        {"id": "w2-y", "domain": "w2"},
        {"id": "x2-sw", "domain": "x2"},
        {"id": "b-edge", "domain": "site-b"},
        {"id": "b-host", "domain": "site-b"},
    ],
    "links": [
        {"id": "a-lan", "a": "a-host", "b": "a-edge", "capacity": "40G"},
        {"id": "a-x1", "a": "a-edge", "b": "x1-sw", "capacity": "40G", "vlans": "100-199"},
        {"id": "x1-w1", "a": "x1-sw", "b": "w1-x", "capacity": "40G", "vlans": "200-299"},
        {"id": "x1-w2", "a": "x1-sw", "b": "w2-x", "capacity": "40G", "vlans": "300-399"},
        {"id": "w1-core", "a": "w1-x", "b": "w1-y", "capacity": "10G"},
        {"id": "w2-core", "a": "w2-x", "b": "w2-y", "capacity": "10G"},
        {"id": "w1-x2", "a": "w1-y", "b": "x2-sw", "capacity": "40G", "vlans": "400-499"},
        {"id": "w2-x2", "a": "w2-y", "b": "x2-sw", "capacity": "40G", "vlans": "500-599"},
        {"id": "x2-b", "a": "x2-sw", "b": "b-edge", "capacity": "40G", "vlans": "600-699"},
        {"id": "b-lan", "a": "b-edge", "b": "b-host", "capacity": "40G"},
    ],
}

# Each programmed domain's wiring file: real port numbers unlike the plan's.
WIRING: dict[str, dict[str, Any]] = {
    "site-a": {"switches": [{"node": "a-edge", "dpid": 11, "ports": {"a-lan": 7, "a-x1": 9}}]},
    "x1": {
        "switches": [{"node": "x1-sw", "dpid": 21, "ports": {"a-x1": 3, "x1-w1": 5, "x1-w2": 6}}]
    },
    "x2": {
        "switches": [{"node": "x2-sw", "dpid": 31, "ports": {"w1-x2": 4, "w2-x2": 8, "x2-b": 2}}]
    },
    "site-b": {"switches": [{"node": "b-edge", "dpid": 41, "ports": {"x2-b": 12, "b-lan": 13}}]},
}


@dataclass
class Domain:
    service: AgentService
    tables: FakeSwitchTables
    provisioner: RulesProvisioner

    @property
    def network(self) -> FakeNetwork:
        return self.tables.network

    def braid_flows(self) -> int:
        return sum(len(self.tables.read(s).flows) for s in self.tables.switches())


class World:
    def __init__(self, folder: Path, net: dict[str, Any] | None = None) -> None:
        source = folder / "net.yaml"
        source.write_text(yaml.safe_dump(net or NET))
        self.folder = folder
        self.domains_file: MultiDomainNetwork = load_multidomain(source)
        self.whole = topology_from_dict(strip_domain_keys(net or NET))
        self.services = {d: self.service(d) for d in self.domains_file.view.domains}
        self.log = SqliteDecisionLog(folder / "o.db", synchronous="NORMAL")
        self.orchestrator = Orchestrator(self.domains_file.view, FakePool(self.services), self.log)
        self.programmed = {d: self.domain(d) for d in WIRING}

    def service(self, domain: str) -> AgentService:
        return AgentService(
            self.domains_file, domain, SqliteHoldStore(self.folder / f"{domain}.db")
        )

    def domain(self, name: str) -> Domain:
        config = wiring_from_dict(WIRING[name], self.whole, hosts=False)
        tables = FakeSwitchTables(FakeNetwork(self.whole, config.ports))
        plans = agent_plans(self.domains_file, self.services[name], config)
        store = MemoryProvisioningStore()
        provisioner = RulesProvisioner(plans, store, tables, holder=name, lead=LEAD)
        return Domain(self.services[name], tables, provisioner)

    def step(self, now: int) -> dict[str, dict[str, str]]:
        """One pass in every programmed domain; what failed in each (none: checked)."""
        return {n: dict(d.provisioner.step(now).errors) for n, d in self.programmed.items()}

    def reserve(
        self, rid: str, gbps: int, start: int, strategy: Strategy | None = None
    ) -> NegotiationResult:
        request = NegotiationRequest(
            rid, "site-a", "a-host", "site-b", "b-host", gbps * G, start, start + 600, strategy
        )
        return self.orchestrator.reserve(request)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    made = World(tmp_path)
    yield made
    made.log.close()


def carried(world: World, result: NegotiationResult, path: int) -> tuple[str, int]:
    """Walk a packet of `result`'s path from site A's LAN to site B's: (where it left
    b-edge, port). The WANs carry a path's VLAN from one SDX to the other (their own
    systems do); every other hop is a domain's switch as its agent programmed it."""
    vlans = dict(result.paths[path].vlans)
    edge = world.programmed["site-a"].network.switches["a-edge"]
    # Many flows: find one the edge's select group puts on this path.
    for sport in range(1000, 1400):
        tcp = Packet(7, ipv4_src="10.0.0.1", ipv4_dst="10.0.0.2", ip_proto=6, tp_src=sport)
        ((port, out),) = edge.process(tcp)
        if out.vlan == vlans["a-x1"]:
            break
    assert port == 9
    wan = "w1" if "x1-w1" in vlans else "w2"
    x1 = world.programmed["x1"].network.switches["x1-sw"]
    ((port, out),) = x1.process(Packet(3, vlan=out.vlan, ip_proto=6))
    assert (port, out.vlan) == ({"w1": 5, "w2": 6}[wan], vlans[f"x1-{wan}"])
    x2 = world.programmed["x2"].network.switches["x2-sw"]
    ((port, out),) = x2.process(Packet({"w1": 4, "w2": 8}[wan], vlan=vlans[f"{wan}-x2"]))
    assert (port, out.vlan) == (2, vlans["x2-b"])
    far = world.programmed["site-b"].network.switches["b-edge"]
    ((port, out),) = far.process(Packet(12, vlan=out.vlan))
    assert out.vlan is None
    return "b-edge", port


def test_every_domain_programs_its_own_switches_then_cancel_leaves_nothing(world: World) -> None:
    start = int(time.time()) + 3600
    result = world.reserve("r-1", 12, start)
    assert result.success and len(result.paths) == 2
    assert not any(
        world.step(start - LEAD - 1).values()
    )  # not yet: the lead time before the window
    assert all(d.braid_flows() == 0 for d in world.programmed.values())
    assert not any(world.step(start - LEAD).values())
    for name, domain in world.programmed.items():
        assert domain.braid_flows() > 0, name
    for path in range(2):
        assert carried(world, result, path) == ("b-edge", 13)
    cancelled = world.orchestrator.cancel("r-1")
    assert cancelled is not None and cancelled.state == "cancelled"
    assert not any(world.step(start).values())
    assert all(d.braid_flows() == 0 for d in world.programmed.values())
    assert all(not t.groups for d in world.programmed.values() for t in d.network.dump().values())


def test_rules_leave_at_the_end_of_the_window(world: World) -> None:
    start = int(time.time()) + 3600
    assert world.reserve("r-1", 4, start).success
    world.step(start)
    assert all(d.braid_flows() > 0 for d in world.programmed.values())
    world.step(start + 600)
    assert all(d.braid_flows() == 0 for d in world.programmed.values())


def test_a_refused_reservation_programs_nothing(world: World) -> None:
    start = int(time.time()) + 3600
    assert not world.reserve("r-big", 30, start).success  # more than both WANs carry
    world.step(start)
    assert all(d.braid_flows() == 0 for d in world.programmed.values())


def test_two_reservations_at_once_keep_apart_and_the_rules_survive_a_restart(
    world: World,
) -> None:
    start = int(time.time()) + 3600
    first = world.reserve("r-1", 4, start)
    assert first.success
    assert not any(world.step(start).values())
    x1_alone = world.programmed["x1"].braid_flows()
    # A second reservation of the same pair: the SDXs bridge its VLANs beside the
    # first's; the edges' entry (site A's LAN, untagged) is the first's while it lasts.
    second = world.reserve("r-2", 4, start + 300)
    assert second.success
    failed = world.step(start + 300)
    assert set(failed["site-a"]) == set(failed["site-b"]) == {second.transaction}
    assert "clash" in failed["site-a"][second.transaction]
    assert not failed["x1"] and not failed["x2"]
    assert world.programmed["x1"].braid_flows() > x1_alone
    # The agent of x1 restarts: the rules its Commits brought come back from its store.
    world.services["x1"].store.close()
    world.services["x1"] = world.service("x1")
    world.programmed["x1"] = world.domain("x1")
    world.step(start + 300)
    assert world.programmed["x1"].braid_flows() > x1_alone


def test_a_link_out_of_vlans_is_retried_on_fewer_paths(tmp_path: Path) -> None:
    """a-x1 allows one VLAN: two paths cannot both cross it, one path can."""
    narrow = {**NET, "links": [dict(link) for link in NET["links"]]}
    for link in narrow["links"]:
        if link["id"] == "a-x1":
            link["vlans"] = "150"
    (tmp_path / "narrow").mkdir()
    world = World(tmp_path / "narrow", narrow)
    try:
        start = int(time.time()) + 3600
        fits = world.reserve("r-8", 8, start, "equal-split")  # two paths asked, one enough
        assert fits.success, fits.reason
        (path,) = fits.paths
        assert path.vlans[0] == ("a-x1", 150)
        (retry,) = [e.text for e in fits.trace if e.phase == "retry"]
        assert retry == "x1: no free VLAN on link a-x1 in 150-150; again with at most 1 path(s)"
        refused = world.reserve("r-12", 12, start + 3600, "equal-split")  # needs both WANs
        assert not refused.success
        assert "no free VLAN on link a-x1 in 150-150" in refused.reason
        looked_up = world.orchestrator.lookup("r-12")
        assert looked_up is not None and looked_up.reason == refused.reason
        assert not any(h.state.value == "held" for s in world.services.values() for h in s.status())
    finally:
        world.log.close()


def test_a_modify_installs_the_new_rules_before_the_old_leave(world: World) -> None:
    """Make-before-break on the switches: while both versions are committed the SDXs bridge
    the new VLANs beside the old and the edges keep the old entry (the new one clashes with
    it); once the old version is released the edges move to the new paths, the old go."""
    start = int(time.time()) + 3600
    old = world.reserve("r-1", 4, start)
    assert old.success
    assert not any(world.step(start).values())
    x1 = world.programmed["x1"].network.switches["x1-sw"]
    old_vlans = {dict(p.vlans)["a-x1"] for p in old.paths}
    seen: dict[str, dict[str, str]] = {}

    def both_committed(release: Any) -> None:
        seen.update(world.step(start))
        for path in range(len(old.paths)):  # the old paths still carry the traffic
            assert carried(world, old, path) == ("b-edge", 13)

    world.orchestrator.hooks.before_release = both_committed
    new = world.orchestrator.modify("r-1", Modification(bandwidth=12 * G))
    assert new is not None and new.success and len(new.paths) == 2
    assert set(seen["site-a"]) == set(seen["site-b"]) == {new.transaction}  # clash: old stays
    assert not seen["x1"] and not seen["x2"]  # the SDXs had the new bridges in place
    assert not any(world.step(start).values())  # the old released: the new take over
    for path in range(2):
        assert carried(world, new, path) == ("b-edge", 13)
    new_vlans = {dict(p.vlans)["a-x1"] for p in new.paths}
    assert not old_vlans & new_vlans  # the new version was booked beside the old
    for vlan in old_vlans:  # the old bridges are gone
        assert x1.process(Packet(3, vlan=vlan, ip_proto=6)) == []


def test_a_volume_s_rules_change_at_its_step_boundary(world: World) -> None:
    """w1 is busier from start + 300: the volume's second step carries less over w1,
    and each programmed domain swaps the first step's rules for the second's there."""
    from braid.app.negotiation.volume import reserve_volume

    start = int(time.time()) + 3600
    outcome = reserve_volume(world.orchestrator, _busy_volume(world, "v-1", start))
    assert outcome.success, outcome.reason
    assert [(s.start - start, s.end - start, s.rate) for s in outcome.steps] == [
        (0, 300, 20 * G),
        (300, 350, 14 * G),
    ]
    assert not any(world.step(start - LEAD).values())
    edge = world.programmed["site-a"]
    assert edge.braid_flows() > 0
    before = edge.network.dump()
    assert not any(world.step(start + 300).values())  # the second step's rules went in
    assert all(d.braid_flows() > 0 for d in world.programmed.values())
    assert edge.network.dump() != before  # the split over the two WANs follows the rates
    world.step(start + 350)  # the volume is done: its last step's rules leave
    assert all(d.braid_flows() == 0 for d in world.programmed.values())


def _held_rates(world: World) -> dict[str, list[int]]:
    """What the programmed domains' switches hold of the rates: the sites' edge meters
    (kbit/s) and x1's queues (guaranteed bit/s), sorted."""
    tables = {name: d.network.dump() for name, d in world.programmed.items()}
    return {
        "a-edge": sorted(m.rate_kbps for m in tables["site-a"]["a-edge"].meters),
        "b-edge": sorted(m.rate_kbps for m in tables["site-b"]["b-edge"].meters),
        "x1-sw": sorted(q.min_rate for q in tables["x1"]["x1-sw"].queues),
    }


def _step_rates(step: Any) -> dict[str, list[int]]:
    """The rates a step's rules hold, hard: each edge meters the step's rate; x1 queues each
    path's share both ways (towards its WAN, and back towards site A)."""
    rates = [r for r in step.path_rates if r > 0]
    edge = [meter_kbps(step.rate)]
    return {"a-edge": edge, "b-edge": edge, "x1-sw": sorted(rates * 2)}


def test_a_hard_volume_holds_each_step_s_rates_and_meters(world: World) -> None:
    """Every step's Commit carries rules at its own rates: at each step the edges' meters
    and x1's queues are that step's; at the cut the next step's replace them."""
    from braid.app.negotiation.volume import reserve_volume

    start = int(time.time()) + 3600
    ask = _busy_volume(world, "v-hard", start, Policing.HARD)
    outcome = reserve_volume(world.orchestrator, ask)
    assert outcome.success, outcome.reason
    first, second = outcome.steps
    assert {p.policing for plan in outcome.plans for p in plan} == {Policing.HARD}
    assert not any(world.step(start - LEAD).values())
    assert _held_rates(world) == _step_rates(first)
    # The next step's lead: its rules have the keys of this step's (the same entry at the
    # edges, and the VLANs its Preps picked again): it waits, failing nowhere, and takes
    # over at the cut.
    assert not any(world.step(start + 300 - LEAD).values())
    assert _held_rates(world) == _step_rates(first)
    assert not any(world.step(start + 300).values())
    assert _held_rates(world) == _step_rates(second)
    world.step(start + 350)
    assert all(d.braid_flows() == 0 for d in world.programmed.values())
    assert _held_rates(world) == {"a-edge": [], "b-edge": [], "x1-sw": []}


class RecordingPool(FakePool):
    """Keeps every Commit's rule plan, by (transaction, domain)."""

    def __init__(self, services: dict[str, AgentService]) -> None:
        super().__init__(services)
        self.commits: dict[tuple[str, str], tuple[Any, ...]] = {}

    def commit(self, domain: str, tx: str, token: str, switches: Any = ()) -> Any:
        self.commits[(tx, domain)] = tuple(switches)
        return super().commit(domain, tx, token, switches)


def _busy_volume(world: World, rid: str, start: int, policing: Policing = Policing.SOFT) -> Any:
    """6G of w1 booked from start + 300: 20G for 300 s (6000 Gbit), then 14G, so the
    volume asked (837.5 GB = 6700 Gbit) has two steps and is done 50 s after the cut."""
    from braid.app.agent.messages import PrepCall
    from braid.app.negotiation.volume import VolumeRequest
    from braid.core.negotiation.holds import SegmentAsk

    segment = SegmentAsk("w1-x", "w1-y", 6 * G, 0)
    busy = PrepCall(f"busy-{rid}", "t" * 20, (start + 300, start + 900), (segment,), 600, True)
    assert world.services["w1"].prepare(busy).yes
    world.services["w1"].commit(f"busy-{rid}", "t" * 20)
    return VolumeRequest(
        rid, "site-a", "a-host", "site-b", "b-host", 837_500_000_000, start, start + 3600,
        policing=policing,
    )  # fmt: skip


class CrashError(Exception):
    pass


def _crash_after_decision(world: World, ask: Any) -> Orchestrator:
    """Reserve `ask`, the orchestrator dying once every step's decision is written (nobody
    told); then a new orchestrator over the same log, its recovery done."""
    from braid.app.negotiation.volume import reserve_volume

    def die(tx: Any) -> None:
        raise CrashError

    world.orchestrator.hooks.after_decide = die
    with pytest.raises(CrashError):
        reserve_volume(world.orchestrator, ask)
    pool = RecordingPool(world.services)
    restarted = Orchestrator(world.domains_file.view, pool, world.log)
    found = restarted.delivery.recover()
    assert len(found) == 2
    assert restarted.delivery.finish() == 0
    world.orchestrator = restarted
    return restarted


def test_a_volume_step_committed_by_recovery_installs_its_rules(world: World) -> None:
    """Killed after the decision, restarted: recovery sends each step's Commit with the
    rules the live path would have sent, and every domain programs every step."""
    start = int(time.time()) + 3600
    ask = _busy_volume(world, "v-1", start)
    restarted = _crash_after_decision(world, ask)
    pool = restarted.agents
    assert isinstance(pool, RecordingPool)
    steps = [tx for tx, _ in pool.commits]
    assert len(set(steps)) == 2
    for domain in WIRING:  # every programmed domain had its part of both steps' rules
        assert all(pool.commits[(tx, domain)] for tx in set(steps))
    assert not any(world.step(start - LEAD).values())
    edge = world.programmed["site-a"]
    assert all(d.braid_flows() > 0 for d in world.programmed.values())
    before = edge.network.dump()
    assert not any(world.step(start + 300).values())  # the second step's rules went in
    assert all(d.braid_flows() > 0 for d in world.programmed.values())
    assert edge.network.dump() != before
    world.step(start + 350)
    assert all(d.braid_flows() == 0 for d in world.programmed.values())


def test_recovery_sends_the_commits_the_live_path_sends(tmp_path: Path) -> None:
    """The same volume in two equal worlds, one live, one crashed after the decision:
    every step's Commit to every domain carries the same rules."""
    from braid.app.negotiation.volume import reserve_volume

    start = int(time.time()) + 3600
    sent = []
    for name, crash in (("live", False), ("crashed", True)):
        (tmp_path / name).mkdir()
        world = World(tmp_path / name)
        try:
            pool = RecordingPool(world.services)
            world.orchestrator = Orchestrator(world.domains_file.view, pool, world.log)
            ask = _busy_volume(world, "v-1", start)
            if crash:
                pool = _crash_after_decision(world, ask).agents  # type: ignore[assignment]
            else:
                assert reserve_volume(world.orchestrator, ask).success
            by_step = sorted(pool.commits.items(), key=lambda kv: (kv[0][0][-3:], kv[0][1]))
            sent.append([(tx[-3:], domain, plan) for (tx, domain), plan in by_step])
        finally:
            world.log.close()
    live, recovered = sent
    assert len(live) == 2 * len(NET["domains"])  # both steps, in every domain
    assert recovered == live


def test_a_volume_logged_before_step_rules_still_recovers(world: World) -> None:
    """A decision-log entry from before step rules were logged (no `step_switches`):
    recovery still commits every step (with no rules, as then)."""
    start = int(time.time()) + 3600
    ask = _busy_volume(world, "v-old", start)
    log = world.log
    saved = log.save

    def as_before(tx: Any, **kwargs: Any) -> None:
        body = kwargs.get("result")
        if body is not None and "step_switches" in body:
            kwargs["result"] = {k: v for k, v in body.items() if k != "step_switches"}
        saved(tx, **kwargs)

    log.save = as_before  # type: ignore[method-assign]
    try:
        _crash_after_decision(world, ask)
    finally:
        log.save = saved  # type: ignore[method-assign]
    steps = (".s0", ".s1")
    held = [h for s in world.services.values() for h in s.status()]
    held = [h for h in held if h.transaction.endswith(steps)]
    assert held and all(h.state.value == "committed" for h in held)
