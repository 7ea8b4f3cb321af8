"""ESnet OSCARS topology JSON (`devices` + `adjcies`) to braid's topology dict.

Devices become nodes. Adjacencies join two ports; an adjacency and its
reverse describe one full-duplex circuit, so they become a single link.
OSCARS metrics are routing costs (e.g. `MPLS`), not delays, so no latency is
taken from them: braid falls back to coordinates or its default latency.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from braid.adapters.link_ids import unique_link_id
from braid.core.model.vlans import VLAN_MAX, VLAN_MIN

BPS_PER_MBPS = 1_000_000
_BANDWIDTH_FIELDS = ("reservableIngressBw", "reservableEgressBw")

Port = Mapping[str, Any]
Ranges = list[tuple[int, int]]


class OscarsFormatError(ValueError):
    """An OSCARS document braid cannot use; the message names the JSON path."""


def is_oscars(data: Mapping[str, Any]) -> bool:
    return "devices" in data and "adjcies" in data


def oscars_to_dict(data: Mapping[str, Any]) -> dict[str, Any]:
    """Convert an OSCARS topology; skipped or defaulted items are listed under `notes`."""
    notes: list[str] = []
    owners: dict[str, tuple[str, Port]] = {}
    nodes: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, device in enumerate(_list(data.get("devices"), "devices")):
        node = _node(device, f"devices[{i}]", owners)
        if node["id"] in seen:
            raise OscarsFormatError(f"devices[{i}].urn: duplicate device {node['id']!r}")
        seen.add(node["id"])
        nodes.append(node)
    placeholders = sum(1 for node in nodes if "lat" not in node)
    if placeholders:
        notes.append(
            f"{placeholders} of {len(nodes)} devices have no usable coordinates "
            "(missing or the 0.0, 0.0 placeholder); lat/lon omitted"
        )
    links = _links(_list(data.get("adjcies"), "adjcies"), owners, notes)
    return {"nodes": nodes, "links": links, "notes": notes}


def _list(value: object, where: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise OscarsFormatError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise OscarsFormatError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _urn(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise OscarsFormatError(f"{where}.{key}: missing or not a non-empty string")
    return value


def _node(device: object, where: str, owners: dict[str, tuple[str, Port]]) -> dict[str, Any]:
    """Build a node and record which device owns each of its ports."""
    entry = _mapping(device, where)
    urn = _urn(entry, "urn", where)
    for j, port in enumerate(_list(entry.get("ports", []), f"{where}.ports")):
        port_entry = _mapping(port, f"{where}.ports[{j}]")
        port_urn = _urn(port_entry, "urn", f"{where}.ports[{j}]")
        if port_urn in owners:
            raise OscarsFormatError(f"{where}.ports[{j}].urn: duplicate port {port_urn!r}")
        owners[port_urn] = (urn, port_entry)
    node: dict[str, Any] = {"id": urn}
    if isinstance(entry.get("location"), str) and entry["location"]:
        node["name"] = entry["location"]
    coordinates = _coordinates(entry.get("latitude"), entry.get("longitude"))
    if coordinates is not None:
        node["lat"], node["lon"] = coordinates
    return node


def _coordinates(lat_value: object, lon_value: object) -> tuple[float, float] | None:
    try:
        lat, lon = float(str(lat_value)), float(str(lon_value))
    except ValueError:
        return None
    # OSCARS writes "0.0", "0.0" for an unknown location; the Gulf of Guinea hosts no router.
    if (lat, lon) == (0.0, 0.0) or not (abs(lat) <= 90 and abs(lon) <= 180):
        return None
    return lat, lon


def _links(
    adjacencies: Sequence[Any], owners: dict[str, tuple[str, Port]], notes: list[str]
) -> list[dict[str, Any]]:
    links: list[dict[str, Any]] = []
    by_ports: dict[tuple[str, str], dict[str, Any]] = {}
    paired: set[str] = set()
    used: set[str] = set()
    for i, adjacency in enumerate(adjacencies):
        where = f"adjcies[{i}]"
        a_port, z_port, metrics = _ends(adjacency, where)
        problem = _skip_reason(a_port, z_port, owners, by_ports)
        if problem:
            notes.append(f"{where}: skipped adjacency {a_port} -> {z_port}: {problem}")
            continue
        reverse = by_ports.get((z_port, a_port))
        if reverse is not None and reverse["id"] not in paired:
            paired.add(reverse["id"])
            by_ports[(a_port, z_port)] = reverse
            if reverse["oscars"]["metrics"] != metrics:
                notes.append(f"{where}: metrics differ from the reverse adjacency; kept the first")
            continue
        link = _link(a_port, z_port, metrics, owners, used, notes)
        by_ports[(a_port, z_port)] = link
        links.append(link)
    if len(paired) < len(links):
        notes.append(
            f"{len(links) - len(paired)} of {len(links)} links come from a single adjacency "
            "with no reverse adjacency; each was taken as a full-duplex link"
        )
    return links


def _ends(adjacency: object, where: str) -> tuple[str, str, dict[str, Any]]:
    entry = _mapping(adjacency, where)
    a_end = _mapping(entry.get("a"), f"{where}.a")
    z_end = _mapping(entry.get("z"), f"{where}.z")
    metrics = entry.get("metrics") or {}
    return (
        _urn(a_end, "port", f"{where}.a"),
        _urn(z_end, "port", f"{where}.z"),
        dict(_mapping(metrics, f"{where}.metrics")),
    )


def _skip_reason(
    a_port: str,
    z_port: str,
    owners: Mapping[str, tuple[str, Port]],
    by_ports: Mapping[tuple[str, str], object],
) -> str | None:
    for port in (a_port, z_port):
        if port not in owners:
            return f"port {port!r} belongs to no device"
    if owners[a_port][0] == owners[z_port][0]:
        return "both ports are on the same device"
    if (a_port, z_port) in by_ports:
        return "duplicate adjacency"
    return None


def _link(
    a_port: str,
    z_port: str,
    metrics: dict[str, Any],
    owners: Mapping[str, tuple[str, Port]],
    used: set[str],
    notes: list[str],
) -> dict[str, Any]:
    (a, a_entry), (b, z_entry) = owners[a_port], owners[z_port]
    link_id = unique_link_id(a, b, used)
    link: dict[str, Any] = {"id": link_id, "a": a, "b": b}
    mbps = _reservable_mbps(a_entry, z_entry)
    if mbps is None:
        notes.append(f"link {link_id}: no positive reservable bandwidth; capacity omitted")
    else:
        link["capacity"] = f"{mbps * BPS_PER_MBPS}bps"
    vlans = _intersect(_vlans(a_entry, a_port), _vlans(z_entry, z_port))
    usable = _intersect(vlans, [(VLAN_MIN, VLAN_MAX)])  # OSCARS lists 4095, a reserved id
    if usable:  # the VLANs braid may assign on this link (none listed: any)
        link["vlans"] = _format_ranges(usable)
    link["oscars"] = {
        "a_port": a_port,
        "b_port": z_port,
        "vlans": _format_ranges(vlans),
        "metrics": metrics,
    }
    return link


def _reservable_mbps(a_entry: Port, z_entry: Port) -> int | None:
    """What both ends can carry in both directions: the least of the four figures."""
    values = [entry.get(key) for entry in (a_entry, z_entry) for key in _BANDWIDTH_FIELDS]
    numbers = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if len(numbers) < len(values) or min(numbers) <= 0:
        return None
    return min(numbers)


def _vlans(port: Port, urn: str) -> Ranges:
    """The port's reservable VLAN ranges, sorted and merged (OSCARS lists them unordered)."""
    ranges: Ranges = []
    for item in _list(port.get("reservableVlans", []), f"port {urn}: reservableVlans"):
        entry = _mapping(item, f"port {urn}: reservableVlans")
        floor, ceiling = entry.get("floor"), entry.get("ceiling")
        if not isinstance(floor, int) or not isinstance(ceiling, int) or floor > ceiling:
            raise OscarsFormatError(f"port {urn}: reservableVlans: bad range {dict(entry)!r}")
        ranges.append((floor, ceiling))
    merged: Ranges = []
    for floor, ceiling in sorted(ranges):
        if merged and floor <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], ceiling))
        else:
            merged.append((floor, ceiling))
    return merged


def _intersect(left: Ranges, right: Ranges) -> Ranges:
    """VLANs usable on a link are those both of its ports accept."""
    out: Ranges = []
    i = j = 0
    while i < len(left) and j < len(right):
        low, high = max(left[i][0], right[j][0]), min(left[i][1], right[j][1])
        if low <= high:
            out.append((low, high))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return out


def _format_ranges(ranges: Ranges) -> str:
    return ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in ranges)
