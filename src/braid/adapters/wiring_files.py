"""Southbound wiring files: how braid reaches each switch, and how the data plane is cabled.

```yaml
drivers:                      # optional; what each driver kind needs
  direct: {rundir: /var/run/openvswitch}   # ovs-ofctl on this host (rundir optional;
                              # netns: the namespace of the bridges' port netdevs, where
                              # the port queues are written with tc; default this one's)
  controller: {api: 127.0.0.1:7300, token_file: /etc/braid/controller.token}
                              # a `braid controller` (or unix:/path); token_file optional
switches:                     # one per topology node braid programs
  - {node: ORNL, dpid: 1, driver: direct, bridge: br-ornl, ports: {ORNL-CHIC: 1, ORNL-ATLA: 2}}
hosts:                        # where reservations begin and end: one host per node
  - {name: ornl-dtn, node: ORNL, port: 10, ipv4: 10.0.0.1}
```

A reservation between two nodes carries the traffic of the hosts at those
nodes. Every error names the file and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.rules.model import HostPort, PortMap, SwitchPorts

__all__ = [
    "SouthboundConfig",
    "SwitchAccess",
    "load_wiring",
    "wiring_from_dict",
    "wiring_of_ports",
    "wiring_skeleton",
]

DRIVERS: Final = ("direct", "controller")


@dataclass(frozen=True, slots=True)
class SwitchAccess:
    """How one switch is reached: `direct` with an OVS bridge, or `controller`."""

    driver: str
    bridge: str | None = None


@dataclass(frozen=True, slots=True)
class SouthboundConfig:
    ports: PortMap
    host_at: Mapping[str, str]  # node -> host name
    access: Mapping[str, SwitchAccess]  # switch (node) -> how to reach it
    rundir: str | None = None  # OVS_RUNDIR for the direct driver
    controller_api: str | None = None
    # The file holding the controller API's bearer token (read when the driver is made).
    controller_token_file: str | None = None
    # The network namespace the direct driver's bridges have their port netdevs in (an
    # Open vSwitch run in a namespace of its own): tc writes the port queues there.
    netns: str | None = None


def load_wiring(path: Path, topology: Topology, *, hosts: bool = True) -> SouthboundConfig:
    """Read a wiring file; `hosts=False` (a domain agent's) lets it name no hosts."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(str(path), f"cannot read the wiring file: {exc}") from exc
    try:
        return wiring_from_dict(data, topology, hosts=hosts)
    except InputError as exc:
        raise InputError(f"{path}: {exc.field}", exc.message) from exc


def wiring_from_dict(data: object, topology: Topology, *, hosts: bool = True) -> SouthboundConfig:
    if not isinstance(data, Mapping):
        raise InputError("", "a wiring file is a mapping with 'switches' and 'hosts'")
    unknown = sorted(set(data) - {"drivers", "switches", "hosts"})
    if unknown:
        raise InputError(unknown[0], "unknown key; expected drivers, switches, hosts")
    drivers = _mapping(data.get("drivers", {}), "drivers")
    switches, access = _switches(_list(data, "switches"), topology, drivers)
    listed = _list(data, "hosts") if hosts or "hosts" in data else []
    host_ports, host_at = _hosts(listed, switches)
    controller = _mapping(drivers.get("controller", {}), "drivers.controller")
    unknown = sorted(set(controller) - {"api", "token_file"})
    if unknown:
        raise InputError(
            f"drivers.controller.{unknown[0]}", "unknown key; expected api, token_file"
        )
    direct = _mapping(drivers.get("direct", {}), "drivers.direct")
    unknown = sorted(set(direct) - {"rundir", "netns"})
    if unknown:
        raise InputError(f"drivers.direct.{unknown[0]}", "unknown key; expected rundir, netns")
    return SouthboundConfig(
        PortMap(switches, host_ports),
        host_at,
        access,
        _text(direct.get("rundir"), "rundir"),
        _text(controller.get("api"), "api"),
        _text(controller.get("token_file"), "drivers.controller.token_file"),
        _text(direct.get("netns"), "drivers.direct.netns"),
    )


def _switches(
    items: list[Any], topology: Topology, drivers: Mapping[str, Any]
) -> tuple[dict[str, SwitchPorts], dict[str, SwitchAccess]]:
    switches: dict[str, SwitchPorts] = {}
    access: dict[str, SwitchAccess] = {}
    for i, item in enumerate(items):
        where = f"switches[{i}]"
        entry = _mapping(item, where)
        node = entry.get("node")
        if not isinstance(node, str) or node not in topology.nodes:
            raise InputError(f"{where}.node", f"not a node of the topology: {node!r}")
        if node in switches:
            raise InputError(f"{where}.node", f"{node!r} is wired twice")
        driver = entry.get("driver", "direct")
        if driver not in DRIVERS:
            raise InputError(f"{where}.driver", f"must be one of {', '.join(DRIVERS)}")
        if driver == "controller" and "controller" not in drivers:
            raise InputError(f"{where}.driver", "needs drivers.controller.api in the file")
        bridge = _text(entry.get("bridge", node), f"{where}.bridge")
        ports = _ports(entry.get("ports", {}), topology, node, f"{where}.ports")
        switches[node] = SwitchPorts(node, _number(entry.get("dpid"), f"{where}.dpid"), ports)
        access[node] = SwitchAccess(driver, bridge if driver == "direct" else None)
    return switches, access


def _ports(value: object, topology: Topology, node: str, where: str) -> dict[str, int]:
    ports = _mapping(value, where)
    for link, port in ports.items():
        known = topology.links.get(link)
        if known is None or node not in (known.a, known.b):
            raise InputError(f"{where}.{link}", f"not a link of node {node!r}")
        _number(port, f"{where}.{link}")
    return {str(k): int(v) for k, v in ports.items()}


def _hosts(
    items: list[Any], switches: Mapping[str, SwitchPorts]
) -> tuple[dict[str, HostPort], dict[str, str]]:
    hosts: dict[str, HostPort] = {}
    host_at: dict[str, str] = {}
    for i, item in enumerate(items):
        where = f"hosts[{i}]"
        entry = _mapping(item, where)
        name = _text(entry.get("name"), f"{where}.name")
        node = entry.get("node")
        if name is None or name in hosts:
            raise InputError(f"{where}.name", "missing, or the same as another host's")
        if node not in switches:
            raise InputError(f"{where}.node", f"not a wired switch: {node!r}")
        port = _number(entry.get("port"), f"{where}.port")
        hosts[name] = HostPort(name, str(node), port, str(entry.get("ipv4")), entry.get("mac"))
        host_at.setdefault(str(node), name)
    return hosts, host_at


def _list(data: Mapping[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise InputError(key, "must be a non-empty list")
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(where, "must be a mapping")
    return value


def _number(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(where, f"must be a non-negative whole number, got {value!r}")
    return value


def _text(value: object, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InputError(where, f"must be a non-empty string, got {value!r}")
    return value


def wiring_skeleton(topology: Topology, driver: str = "direct") -> dict[str, Any]:
    """A wiring for `topology` to start from: a bridge per node (`br1`, `br2`, ... in node
    order), ports numbered from 1 in link order, then one host per node on 10.x.y.1."""
    if driver not in DRIVERS:
        raise InputError("driver", f"must be one of {', '.join(DRIVERS)}")
    nodes = list(topology.nodes)
    ports: dict[str, dict[str, int]] = {node: {} for node in nodes}
    for link in topology.links.values():
        for end in (link.a, link.b):
            ports[end][link.id] = len(ports[end]) + 1
    data: dict[str, Any] = {"switches": [], "hosts": []}
    if driver == "controller":
        data["drivers"] = {"controller": {"api": "127.0.0.1:7300"}}
    for i, node in enumerate(nodes):
        switch: dict[str, Any] = {"node": node, "dpid": i + 1, "driver": driver}
        if driver == "direct":
            switch["bridge"] = f"br{i + 1}"
        switch["ports"] = ports[node]
        data["switches"].append(switch)
        address = f"10.{(i + 1) >> 8 & 255}.{(i + 1) & 255}.1"
        data["hosts"].append(
            {"name": f"h{i + 1}", "node": node, "port": len(ports[node]) + 1, "ipv4": address}
        )
    return data


def wiring_of_ports(
    ports: PortMap,
    *,
    drivers: Mapping[str, Any],
    driver: str = "direct",
    bridges: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The wiring file (as data) of a data plane whose ports are known: every switch of
    `ports` reached by `driver` (over its bridge in `bridges`, default the node's own
    name) and every host; `drivers` is the file's `drivers` section."""
    return {
        "drivers": dict(drivers),
        "switches": [
            {
                "node": node,
                "dpid": switch.dpid,
                "driver": driver,
                "bridge": (bridges or {}).get(node, node),
                "ports": dict(switch.link_ports),
            }
            for node, switch in sorted(ports.switches.items())
        ],
        "hosts": [
            {"name": h.host, "node": h.switch, "port": h.port, "ipv4": h.ipv4}
            for h in ports.hosts.values()
        ],
    }
