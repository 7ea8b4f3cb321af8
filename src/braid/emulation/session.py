"""Emulation sessions: book through braid, compile rules, install them, measure with iperf3.

A session owns one emulated network (Mininet + userspace Open vSwitch), one
southbound driver and braid's reservation service on an in-memory store.
Every reservation an experiment makes goes the way REST and the CLI go
(`ReservationService.reserve` / `.cancel`), or, for tenant requests, the
way `braid plan` goes (`Planner` via `decide_line`); the rules that carry it
come from the rule compiler and reach the switches through the driver.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Final

from braid.adapters.emulation.network import EmulatedNetwork, HostSpec
from braid.adapters.emulation.ovs import OvsStart, ensure_ovs, stop_ovs
from braid.adapters.emulation.sendbuffer import raised_send_buffer
from braid.adapters.emulation.sweep import exclusive
from braid.adapters.southbound.driver import SouthboundDriver
from braid.adapters.southbound.switchd_buffer import switchd_send_buffer
from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.results import Seen
from braid.app.reservations.service import ReservationService
from braid.core.model.booking import Allocation
from braid.core.model.instants import format_instant
from braid.core.model.paths import Path
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.rules.changes import install_steps, removal_steps
from braid.core.rules.compiler import compile_reservation
from braid.core.rules.flow_pinning import pin_client_ports
from braid.core.rules.labels import LabelPool
from braid.core.rules.model import (
    Policing,
    PortMap,
    RulePlan,
    RuleRequest,
    RuleSet,
    Selection,
    StepKind,
)
from braid.core.rules.packet_split import PacketSplitPlan, compile_packet_split
from braid.emulation.flow_counts import PortRotation

DRIVERS: Final = ("direct", "controller")
EMULATOR: Final = User("emulate", "operator")


@dataclass(frozen=True, slots=True)
class Installed:
    """A reservation whose rules are in the switches."""

    reservation_id: str
    allocations: tuple[Allocation, ...]
    plan: RulePlan
    pins: tuple[RuleSet, ...] = ()
    booked: bool = True  # False for baselines installed without a booking
    seen: Seen | None = None  # the reservation as the service stored it

    @property
    def bandwidth(self) -> int:
        return sum(a.bandwidth for a in self.allocations)


@dataclass
class SessionOptions:
    driver: str = "direct"
    mtu: int = 9000
    clock: Callable[[], int] = field(default=lambda: int(time.time()))
    # One-way delay of every link (ms), through braid's link emulator; None: as the
    # topology declares (its links' latency_ms). `realtime`: the emulators' senders
    # run at real-time priority (delay accurate to ~0.1 ms on a busy host).
    latency_ms: float | None = None
    realtime: bool = False


class EmulationSession:
    """`with EmulationSession(topology_data, hosts, options) as s:` — torn down on any exit."""

    def __init__(
        self,
        topology_data: Mapping[str, Any],
        hosts: Sequence[HostSpec],
        options: SessionOptions | None = None,
    ) -> None:
        self.options = options or SessionOptions()
        if self.options.driver not in DRIVERS:
            raise ValueError(f"driver must be one of {', '.join(DRIVERS)}")
        self.topology_data = dict(topology_data)
        self.topology = topology_from_dict(self.topology_data)
        self.hosts = tuple(hosts)
        self.net = EmulatedNetwork(
            self.topology,
            self.hosts,
            mtu=self.options.mtu,
            take_lock=False,
            delays_ms=self.link_delays(),
            realtime=self.options.realtime,
        )
        self.service = self._new_service(self.topology_data)
        self.driver: SouthboundDriver | None = None
        self._ovs: OvsStart | None = None
        self._closers: list[Callable[[], None]] = []
        self._installed: dict[str, Installed] = {}
        self._lock = contextlib.ExitStack()
        self.ports = PortRotation()
        self.send_buffer = 0
        self._rtt: str | None = None

    # -- lifetime ------------------------------------------------------------

    def __enter__(self) -> EmulationSession:
        # One emulation per host at a time (fixed bridge names); OVS is started and stopped
        # under the same lock, so a waiting session never finds it gone.
        self._lock.enter_context(exclusive())
        try:
            # Before Open vSwitch forwards its first frame, which creates its send socket.
            self.send_buffer = self._lock.enter_context(raised_send_buffer())
            self._ovs = ensure_ovs()
            self.net.__enter__()
            self.net.reserve_ports(self.ports.ports)
            self.driver = self._make_driver()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        for installed in list(self._installed.values()):
            try:
                self.uninstall(installed)
            except Exception:
                self._installed.pop(installed.reservation_id, None)
        while self._closers:
            self._closers.pop()()
        try:
            self.net.close()
            if self._ovs is not None:
                stop_ovs(self._ovs)
                self._ovs = None
        finally:
            self._lock.close()

    def link_delays(self) -> dict[str, float]:
        """Each link's one-way delay: the --latency override, else the topology's."""
        fixed = self.options.latency_ms
        return {
            link.id: link.latency_ms if fixed is None else fixed
            for link in self.topology.links.values()
        }

    def configured_rtt_ms(self, path: Path) -> float:
        delays = self.link_delays()
        return 2 * sum(delays[link] for link in path.links)

    def measure_rtt_ms(self, src_host: str, dst_host: str, count: int = 20) -> float | None:
        """Median UDP round trip between two hosts over the installed rules (None: lost)."""
        from braid.adapters.emulation.round_trip import udp_rtts

        found = udp_rtts(
            self.net.host(src_host), self.net.host(dst_host), self.net.ip(dst_host), count
        )
        rtts = [r for r in found if r is not None]
        return statistics.median(rtts) if rtts else None

    def datapath_note(self) -> str:
        """What room Open vSwitch had for queued frames (see `sendbuffer`); after traffic."""
        actual = switchd_send_buffer()
        if actual is None:
            return "ovs-vswitchd's send buffer could not be read (ss -0)"
        note = f"ovs-vswitchd's send buffer: {actual / 2**20:.1f} MiB"
        if actual < self.send_buffer:
            note += (
                f" (less than the {self.send_buffer / 2**20:.1f} MiB braid set: Open vSwitch was "
                "already running; restart it for full rates with many flows)"
            )
        return note

    def _make_driver(self) -> SouthboundDriver:
        from braid.emulation.drivers import make_driver

        driver, closer = make_driver(self.options.driver, self.net)
        self._closers.append(closer)
        return driver

    @property
    def live_driver(self) -> SouthboundDriver:
        if self.driver is None:
            raise RuntimeError("the session has not started")
        return self.driver

    # -- the reservation service -------------------------------------------------

    def _new_service(self, topology_data: Mapping[str, Any]) -> ReservationService:
        # The session keeps the store it built: experiments read what was stored.
        self.store = MemoryRepository()
        service = ReservationService(self.store, clock=self.options.clock)
        service.start(topology_data)
        return service

    def retopologise(self, topology_data: Mapping[str, Any]) -> None:
        """Same wiring, new capacities or latencies (e.g. other tunnel offers): re-shape
        links, re-set the emulators' delays, fresh book."""
        topology = topology_from_dict(topology_data)
        if set(topology.links) != set(self.topology.links):
            raise ValueError("retopologise keeps the links; only capacities may change")
        for link in topology.links.values():
            if link.capacity != self.topology.links[link.id].capacity:
                self.net.set_link_rate(link.id, link.capacity)
            if self.options.latency_ms is None and link.latency_ms != self.link_delays()[link.id]:
                self.net.set_link_delay(link.id, link.latency_ms)
        self.topology, self.topology_data = topology, dict(topology_data)
        self.service = self._new_service(topology_data)

    def reserve(self, src: str, dst: str, bandwidth_bps: int, seconds: int, **extra: Any) -> Seen:
        """Book through the service (as REST does)."""
        now = self.options.clock()
        body = {
            "src": src,
            "dst": dst,
            "bandwidth": f"{bandwidth_bps}bps",
            "start": format_instant(now),
            "end": format_instant(now + seconds),
            **extra,
        }
        return self.service.reserve(EMULATOR, Reserve.parse(body))

    def allocations(self, reservation_id: str) -> tuple[Allocation, ...]:
        record = self.store.get(reservation_id)
        if record is None:
            raise KeyError(reservation_id)
        return record.allocations

    # -- rules -----------------------------------------------------------------

    def install(
        self,
        reservation_id: str,
        allocations: Sequence[Allocation],
        src_host: str,
        dst_host: str,
        *,
        pinned: Sequence[tuple[int, int]] = (),
        booked: bool = True,
        ports: PortMap | None = None,
        policing: Policing | None = None,
    ) -> Installed:
        """Compile and install; `pinned` = (path index, client TCP port) per-flow placements;
        `ports`: the wiring with more host addresses than the network's (e.g. a second
        address of a multi-addressed host); `policing`: meters and queues hold the rate
        (None: the rules only route)."""
        pool = LabelPool().with_plans(i.plan for i in self._installed.values())
        request = RuleRequest(
            reservation_id,
            tuple(allocations),
            src_host,
            dst_host,
            selection=Selection.FLOW,
            policing=policing,
        )
        plan = compile_reservation(request, self.topology, ports or self.net.port_map, pool)
        driver = self.live_driver
        for step in install_steps(plan):
            driver.apply(step.rule_set)
        pins = pin_client_ports(plan, request, self.net.port_map, pinned)
        for rule_set in pins:
            driver.apply(rule_set)
        installed = Installed(reservation_id, tuple(allocations), plan, pins, booked)
        self._installed[reservation_id] = installed
        if self._rtt is None:  # once per session: what the experiment's report says
            self._rtt = self._measured_rtt(src_host, dst_host, allocations)
        return installed

    def _measured_rtt(self, src_host: str, dst_host: str, allocations: Sequence[Allocation]) -> str:
        configured = sorted({self.configured_rtt_ms(a.path) for a in allocations})
        measured = self.measure_rtt_ms(src_host, dst_host)
        seen = "lost" if measured is None else f"{measured:.2f} ms"
        return (
            f"round trip {src_host}-{dst_host} over the first reservation installed: configured "
            f"{'/'.join(f'{c:g}' for c in configured)} ms (its paths' links' one-way delays, "
            f"twice), measured {seen} (UDP probe, median of 20)"
        )

    def rtt_note(self) -> str:
        """The round trip measured when the first reservation was installed, beside the
        configured one."""
        return self._rtt or "round trip: not measured (no reservation installed by the session)"

    def install_packet_split(
        self,
        reservation_id: str,
        allocations: Sequence[Allocation],
        src_host: str,
        dst_host: str,
        *,
        resequence: bool,
        measured_one_way_ms: Sequence[float] | None = None,
    ) -> tuple[Installed, PacketSplitPlan]:
        """Compile per-packet splitting and install its switch rules; the edges' configs
        come back in the plan (started by `host_edges.running_edges`)."""
        pool = LabelPool().with_plans(i.plan for i in self._installed.values())
        request = RuleRequest(
            reservation_id, tuple(allocations), src_host, dst_host, selection=Selection.PACKET
        )
        plan = compile_packet_split(
            request,
            self.topology,
            self.net.port_map,
            pool,
            resequence=resequence,
            measured_one_way_ms=measured_one_way_ms,
            # the hosts' MTU leaves room for the tag; IPv4 + TCP with timestamps: 52 bytes
            segment_bytes=self.options.mtu - 4 - 52,
        )
        for step in install_steps(plan.rules):
            self.live_driver.apply(step.rule_set)
        installed = Installed(reservation_id, tuple(allocations), plan.rules, booked=False)
        self._installed[reservation_id] = installed
        return installed, plan

    def uninstall(self, installed: Installed) -> None:
        driver = self.live_driver
        for rule_set in installed.pins:
            driver.remove(rule_set)
        for step in removal_steps(installed.plan):
            if step.kind is StepKind.REMOVE:
                driver.remove(step.rule_set)
        self._installed.pop(installed.reservation_id, None)

    def uninstall_all(self) -> None:
        for installed in list(self._installed.values()):
            self.uninstall(installed)

    def cancel(self, installed: Installed) -> None:
        """Take the rules out, then cancel the booking (as an ending reservation would)."""
        self.uninstall(installed)
        if installed.booked:
            self.service.cancel(EMULATOR, installed.reservation_id)

    def reserve_and_install(
        self,
        src_host: str,
        dst_host: str,
        bandwidth_bps: int,
        seconds: int,
        *,
        pinned_per_path: Callable[[Sequence[Allocation]], Sequence[tuple[int, int]]] | None = None,
        **extra: Any,
    ) -> Installed:
        src, dst = self._node_of(src_host), self._node_of(dst_host)
        seen = self.reserve(src, dst, bandwidth_bps, seconds, **extra)
        rid = seen.record.id
        allocations = self.allocations(rid)
        pinned = pinned_per_path(allocations) if pinned_per_path else ()
        installed = self.install(rid, allocations, src_host, dst_host, pinned=pinned)
        return replace(installed, seen=seen)

    def _node_of(self, host: str) -> str:
        return self.net.wiring.hosts[host].switch


def path_of(topology: Topology, nodes: Sequence[str]) -> Path:
    """The path through `nodes`, taking the first link joining each pair."""
    links = []
    for here, there in itertools.pairwise(nodes):
        found = next(
            (link.id for link in topology.links.values() if {link.a, link.b} == {here, there}),
            None,
        )
        if found is None:
            raise ValueError(f"no link joins {here} and {there}")
        links.append(found)
    return Path(tuple(nodes), tuple(links))


def write_json(path: Any, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n")
