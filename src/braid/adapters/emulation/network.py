"""A Mininet network built from a braid topology: OVS switches in userspace, htb-limited links.

Each topology node becomes an Open vSwitch bridge (`datapath='user'`, fail
mode `secure`: with no rules it forwards nothing, so only installed
reservations carry traffic). Each topology link becomes a veth pair whose
both ends are rate-limited to the link's capacity with htb (Mininet
`TCLink(bw=...)`); host access links are not limited. TX checksum offload is
turned off on every veth (the userspace datapath does not fill checksums in),
and every interface gets the same MTU (jumbo frames by default, as science
networks use them; fewer packets per second also spares the CPU).
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from braid.adapters.dataplane import LinkEmulator, LinkSettings
from braid.adapters.emulation.link_delay import LinkEnd, splice_delay
from braid.adapters.emulation.scaling import MAX_LINK_MBPS
from braid.adapters.emulation.sweep import HOST_PREFIX, SWITCH_PREFIX, exclusive, sweep
from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.rules.model import HostPort, PortMap, SwitchPorts

DEFAULT_MTU: Final = 9000
BURST: Final = "15k"
QUEUE_SECONDS: Final = 0.1  # leaf queue of a limited link, in seconds at its rate
QUEUE_MIN_PACKETS: Final = 10


@dataclass(frozen=True, slots=True)
class HostSpec:
    """An end host: its name in results, and the topology node it hangs off."""

    name: str
    node: str


@dataclass(frozen=True, slots=True)
class Wiring:
    """Names and numbers the emulation gave: bridges, ports, host addresses."""

    bridges: Mapping[str, str]  # topology node -> bridge name
    dpids: Mapping[str, int]
    link_ports: Mapping[str, Mapping[str, int]]  # node -> link id -> OpenFlow port
    link_intfs: Mapping[str, tuple[str, str]]  # link id -> (intf at a, intf at b)
    hosts: Mapping[str, HostPort]
    host_names: Mapping[str, str]  # logical host name -> Mininet name

    def port_map(self) -> PortMap:
        switches = {
            node: SwitchPorts(node, self.dpids[node], dict(self.link_ports[node]))
            for node in self.bridges
        }
        return PortMap(switches, dict(self.hosts))


def link_mbps(capacity_bps: int, link_id: str) -> float:
    mbps = capacity_bps / 1e6
    if not 0 < mbps <= MAX_LINK_MBPS:
        raise InputError(
            f"links.{link_id}.capacity",
            f"{mbps:g} Mbit/s cannot be emulated (htb via Mininet: 0..{MAX_LINK_MBPS:g}); "
            "lower the scale",
        )
    return mbps


def plan_wiring(topology: Topology, hosts: Sequence[HostSpec]) -> Wiring:
    """Bridge names, datapath ids, port numbers and addresses, before anything is built."""
    bridges = {node: f"{SWITCH_PREFIX}{i}" for i, node in enumerate(topology.nodes, start=1)}
    dpids = {node: i for i, node in enumerate(topology.nodes, start=1)}
    next_port = dict.fromkeys(topology.nodes, 1)
    link_ports: dict[str, dict[str, int]] = {node: {} for node in topology.nodes}
    link_intfs: dict[str, tuple[str, str]] = {}
    for link in topology.links.values():
        ends = []
        for node in (link.a, link.b):
            port = next_port[node]
            next_port[node] += 1
            link_ports[node][link.id] = port
            ends.append(f"{bridges[node]}-eth{port}")
        link_intfs[link.id] = (ends[0], ends[1])
    host_ports: dict[str, HostPort] = {}
    host_names: dict[str, str] = {}
    for i, spec in enumerate(hosts, start=1):
        topology.require_node(spec.node, f"hosts.{spec.name}.node")
        if spec.name in host_ports:
            raise InputError(f"hosts.{spec.name}", "host names must be unique")
        port = next_port[spec.node]
        next_port[spec.node] += 1
        mac = f"00:00:00:00:00:{i:02x}"
        host_ports[spec.name] = HostPort(spec.name, spec.node, port, f"10.0.0.{i}", mac)
        host_names[spec.name] = f"{HOST_PREFIX}{i}"
    return Wiring(bridges, dpids, link_ports, link_intfs, host_ports, host_names)


class EmulatedNetwork:
    """Build with `with EmulatedNetwork(...) as net:`; teardown is guaranteed on exit."""

    def __init__(
        self,
        topology: Topology,
        hosts: Sequence[HostSpec],
        *,
        mtu: int = DEFAULT_MTU,
        take_lock: bool = True,
        delays_ms: Mapping[str, float] | None = None,
        realtime: bool = False,
    ) -> None:
        """`take_lock=False` when the caller already holds `sweep.exclusive()`.

        `delays_ms` gives links (by id) a one-way delay through braid's link
        emulator (`link_delay`); links left out or at 0 have none.
        `realtime` runs those emulators' senders at real-time priority.
        """
        self.topology = topology
        self.delays_ms = {k: v for k, v in (delays_ms or {}).items() if v > 0}
        self.realtime = realtime
        self.emulators: dict[str, LinkEmulator] = {}
        self.wiring = plan_wiring(topology, hosts)
        self.mtu = mtu
        self.take_lock = take_lock
        self._net: Any = None
        self._lock = contextlib.ExitStack()
        self._entered = False

    def __enter__(self) -> EmulatedNetwork:
        if self.take_lock:
            self._lock.enter_context(exclusive())
        self._entered = True
        try:
            self._build()
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
        """Stop Mininet, then sweep whatever a failed stop left (idempotent)."""
        if not self._entered:
            return  # never sweep without holding the lock: another emulation may be live
        self._entered = False
        net, self._net = self._net, None
        for emulator in self.emulators.values():
            with contextlib.suppress(Exception):
                emulator.stop()
        self.emulators.clear()
        if net is not None:
            with contextlib.suppress(Exception):
                net.stop()
        try:
            sweep()
        finally:
            self._lock.close()

    def _build(self) -> None:
        from mininet.link import Link, TCLink
        from mininet.log import setLogLevel
        from mininet.net import Mininet
        from mininet.node import OVSSwitch

        setLogLevel("critical")
        sweep()  # a crashed earlier run must not collide with this one
        net = Mininet(controller=None, build=False, autoSetMacs=False, cleanup=False)
        self._net = net
        w = self.wiring
        for node, bridge in w.bridges.items():
            net.addSwitch(
                bridge,
                cls=OVSSwitch,
                datapath="user",
                failMode="secure",
                protocols="OpenFlow13",
                dpid=f"{w.dpids[node]:016x}",
            )
        for link in self.topology.links.values():
            net.addLink(
                w.bridges[link.a],
                w.bridges[link.b],
                port1=w.link_ports[link.a][link.id],
                port2=w.link_ports[link.b][link.id],
                cls=TCLink,
                bw=link_mbps(link.capacity, link.id),
            )
        for name, port in w.hosts.items():
            mn_name = w.host_names[name]
            net.addHost(mn_name, ip=f"{port.ipv4}/8", mac=port.mac)
            net.addLink(mn_name, w.bridges[port.switch], port2=port.port, cls=Link)
        net.build()
        net.start()
        self._wait_for_bridges()
        self._tune_interfaces()
        self._delay_links()
        for link in self.topology.links.values():
            self.set_link_rate(link.id, link.capacity)
        net.staticArp()

    def _delay_links(self) -> None:
        w = self.wiring
        for link_id, delay in self.delays_ms.items():
            link = self.topology.links[link_id]
            ends = tuple(
                LinkEnd(w.bridges[node], intf, w.link_ports[node][link_id])
                for node, intf in zip((link.a, link.b), w.link_intfs[link_id], strict=True)
            )
            self.emulators[link_id] = splice_delay(
                (ends[0], ends[1]), delay, mtu=self.mtu, realtime=self.realtime
            )

    def _wait_for_bridges(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        for bridge in self.wiring.bridges.values():
            while self.run(["ovs-ofctl", "-O", "OpenFlow13", "show", bridge]).returncode != 0:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"bridge {bridge} did not come up in ovs-vswitchd")
                time.sleep(0.1)

    def _tune_interfaces(self) -> None:
        for node in [*self._net.hosts, *self._net.switches]:
            for intf in node.intfList():
                if intf.name == "lo":
                    continue
                node.cmd(f"ethtool -K {intf.name} tx off >/dev/null 2>&1")
                node.cmd(f"ip link set {intf.name} mtu {self.mtu}")

    # -- use ---------------------------------------------------------------

    @property
    def port_map(self) -> PortMap:
        return self.wiring.port_map()

    @property
    def bridges(self) -> Mapping[str, str]:
        return self.wiring.bridges

    def reserve_ports(self, ports: range) -> None:
        """Keep `ports` out of every host's ephemeral range (its own namespace's sysctl), so
        that a client port fixed with `--cport` is never taken by another connection, such as
        iperf3's control connection."""
        value = f"{ports.start}-{ports.stop - 1}"
        for name in self.wiring.hosts:
            self.host(name).cmd(f"sysctl -qw net.ipv4.ip_local_reserved_ports={value}")

    def host(self, name: str) -> Any:
        """The Mininet host behind logical host `name` (has `popen`, `cmd`, `IP`)."""
        if self._net is None:
            raise RuntimeError("the emulated network is not running")
        return self._net.get(self.wiring.host_names[name])

    def ip(self, name: str) -> str:
        return self.wiring.hosts[name].ipv4

    def set_link_rate(
        self, link_id: str, capacity_bps: int, *, queue_seconds: float = QUEUE_SECONDS
    ) -> None:
        """Re-shape both ends of a link (htb rate) to `capacity_bps`, with a queue of
        `queue_seconds` at that rate (a long-haul path wants about its round trip)."""
        mbps = link_mbps(capacity_bps, link_id)
        for intf_name in self.wiring.link_intfs[link_id]:
            self._retune(intf_name, mbps, queue_seconds)

    def set_link_delay(self, link_id: str, delay_ms: float) -> None:
        """A new one-way delay on a link built with one (its emulator's delay, both ways)."""
        emulator = self.emulators.get(link_id)
        if emulator is None:
            raise ValueError(f"link {link_id} was built without a delay; give it one at start")
        emulator.set(LinkSettings(delay_ms=delay_ms))
        self.delays_ms[link_id] = delay_ms

    def _retune(self, intf_name: str, mbps: float, queue_seconds: float) -> None:
        """Mininet's htb layout (root 5:0, class 5:1 carries the rate) plus a bounded leaf.

        The default leaf queue is txqueuelen packets long: seconds of jumbo frames at these
        rates, in which TCP's round-trip time balloons until streams stall on timeouts. A
        queue of about 0.1 s keeps the link busy (round trips are sub-millisecond) and TCP sane.
        """
        limit = max(int(mbps * 1e6 / 8 * queue_seconds), QUEUE_MIN_PACKETS * (self.mtu + 18))
        for argv in (
            ["tc", "class", "change", "dev", intf_name, "parent", "5:0", "classid", "5:1",
             "htb", "rate", f"{mbps}Mbit", "burst", BURST],
            ["tc", "qdisc", "replace", "dev", intf_name, "parent", "5:1", "handle", "10:",
             "bfifo", "limit", str(limit)],
        ):  # fmt: skip
            done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=10)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")

    def tx_bytes(self, link_id: str, from_node: str) -> int:
        """Bytes sent so far into `link_id` by `from_node` (a per-path counter)."""
        a_intf, b_intf = self.wiring.link_intfs[link_id]
        intf = a_intf if self.topology.links[link_id].a == from_node else b_intf
        return int(Path(f"/sys/class/net/{intf}/statistics/tx_bytes").read_text())

    def run(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """A command in the root namespace (where the switches live)."""
        return subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=30)


@contextlib.contextmanager
def emulated(
    topology: Topology, hosts: Sequence[HostSpec], *, mtu: int = DEFAULT_MTU
) -> Iterator[EmulatedNetwork]:
    with EmulatedNetwork(topology, hosts, mtu=mtu) as net:
        yield net
