"""Internet Topology Zoo GraphML to braid's topology dict.

The XML is read with expat feeding an ElementTree builder, instead of
`ElementTree.parse`, because only expat knows where each element starts and
error messages should point at the line of the offending node or edge.
Parallel edges are real circuits in the Zoo, so each one becomes its own link.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any
from xml.parsers import expat

from braid.adapters.link_ids import unique_link_id

Lines = dict[ET.Element, int]


class GraphMLFormatError(ValueError):
    """A GraphML document braid cannot use; `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.message = message
        self.line = line


def graphml_to_dict(source: bytes) -> dict[str, Any]:
    """Convert a GraphML document; skipped or defaulted items are listed under `notes`."""
    root, lines = _parse(source)
    if _local(root.tag) != "graphml":
        raise GraphMLFormatError(f"root element is <{_local(root.tag)}>, not <graphml>", 1)
    graphs = list(_children(root, "graph"))
    if not graphs:
        raise GraphMLFormatError("no <graph> element", lines[root])
    graph, notes = graphs[0], []
    if len(graphs) > 1:
        notes.append(f"only the first of {len(graphs)} <graph> elements was read")
    if graph.get("edgedefault") == "directed":
        notes.append("the graph is declared directed; every edge was taken as a full-duplex link")
    keys = _keys(root)
    nodes = _nodes(graph, keys, lines, notes)
    links = _links(graph, keys, lines, {node["id"] for node in nodes}, notes)
    out: dict[str, Any] = {"nodes": nodes, "links": links, "notes": notes}
    graph_attrs = _data(graph, keys, lines)
    name = graph_attrs.get("label") or graph_attrs.get("Network")
    if name:
        out["name"] = name
    return out


def _parse(source: bytes) -> tuple[ET.Element, Lines]:
    builder = ET.TreeBuilder()
    lines: Lines = {}
    parser = expat.ParserCreate(namespace_separator="}")

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[builder.start(_clark(tag), attrs)] = parser.CurrentLineNumber

    def end(tag: str) -> None:
        builder.end(_clark(tag))

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(source, True)
    except expat.ExpatError as exc:
        reason = expat.ErrorString(exc.code) or "unreadable"
        column = exc.offset + 1
        raise GraphMLFormatError(f"malformed XML: {reason} (column {column})", exc.lineno) from exc
    return builder.close(), lines


def _clark(tag: str) -> str:
    # expat writes "uri}local"; ElementTree's convention is "{uri}local".
    return "{" + tag if "}" in tag else tag


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(parent: ET.Element, local_name: str) -> Iterator[ET.Element]:
    # Matching on the local name accepts GraphML written with or without the namespace.
    return (child for child in parent if _local(child.tag) == local_name)


def _keys(root: ET.Element) -> dict[str, str]:
    """Key id -> attribute name; a key without attr.name is known by its id."""
    keys: dict[str, str] = {}
    for key in _children(root, "key"):
        key_id = key.get("id")
        if key_id:
            keys[key_id] = key.get("attr.name") or key_id
    return keys


def _data(elem: ET.Element, keys: dict[str, str], lines: Lines) -> dict[str, str]:
    values: dict[str, str] = {}
    for data in _children(elem, "data"):
        key_id = data.get("key", "")
        if key_id not in keys:
            raise GraphMLFormatError(f"<data> uses undeclared key {key_id!r}", lines[data])
        values[keys[key_id]] = "".join(data.itertext()).strip()
    return values


def _nodes(
    graph: ET.Element, keys: dict[str, str], lines: Lines, notes: list[str]
) -> list[dict[str, Any]]:
    nodes: list[dict[str, Any]] = []
    seen: set[str] = set()
    without_coordinates = 0
    for elem in _children(graph, "node"):
        node_id = elem.get("id")
        if not node_id:
            raise GraphMLFormatError("<node> without an id", lines[elem])
        if node_id in seen:
            raise GraphMLFormatError(f"duplicate node id {node_id!r}", lines[elem])
        seen.add(node_id)
        attrs = _data(elem, keys, lines)
        node: dict[str, Any] = {"id": node_id}
        if attrs.get("label"):
            node["name"] = attrs["label"]
        coordinates = _coordinates(attrs, lines[elem], notes)
        if coordinates is None:
            without_coordinates += 1
        else:
            node["lat"], node["lon"] = coordinates
        nodes.append(node)
    if without_coordinates:
        notes.append(
            f"{without_coordinates} of {len(nodes)} nodes have no coordinates; "
            "latency of their links falls back to the default"
        )
    return nodes


def _coordinates(attrs: dict[str, str], line: int, notes: list[str]) -> tuple[float, float] | None:
    if "Latitude" not in attrs or "Longitude" not in attrs:
        return None
    try:
        lat, lon = float(attrs["Latitude"]), float(attrs["Longitude"])
    except ValueError:
        lat = lon = math.nan
    if not (math.isfinite(lat) and math.isfinite(lon) and abs(lat) <= 90 and abs(lon) <= 180):
        notes.append(
            f"line {line}: ignored unusable coordinates "
            f"({attrs['Latitude']!r}, {attrs['Longitude']!r})"
        )
        return None
    return lat, lon


def _links(
    graph: ET.Element,
    keys: dict[str, str],
    lines: Lines,
    node_ids: set[str],
    notes: list[str],
) -> list[dict[str, Any]]:
    links: list[dict[str, Any]] = []
    used: set[str] = set()
    for elem in _children(graph, "edge"):
        a, b, line = elem.get("source"), elem.get("target"), lines[elem]
        if not a or not b:
            raise GraphMLFormatError("<edge> without source or target", line)
        for end in (a, b):
            if end not in node_ids:
                raise GraphMLFormatError(f"<edge> refers to unknown node {end!r}", line)
        if a == b:
            notes.append(f"line {line}: skipped self-loop on node {a!r}")
            continue
        link: dict[str, Any] = {"id": unique_link_id(a, b, used), "a": a, "b": b}
        bps = _speed_bps(_data(elem, keys, lines), line, notes)
        if bps is not None:
            link["capacity"] = f"{bps}bps"
        links.append(link)
    without_speed = sum(1 for link in links if "capacity" not in link)
    if without_speed:
        notes.append(
            f"{without_speed} of {len(links)} links have no LinkSpeedRaw or LinkSpeed; "
            "their capacity is left to the default"
        )
    return links


_UNIT_BPS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def _speed_bps(attrs: dict[str, str], line: int, notes: list[str]) -> int | None:
    """Link speed in bit/s: `LinkSpeedRaw`, else `LinkSpeed` scaled by `LinkSpeedUnits`.

    Some Zoo files (Garr, for one) give only the scaled pair.
    """
    raw = attrs.get("LinkSpeedRaw")
    if raw:
        return _positive_bps(raw, 1, "LinkSpeedRaw", line, notes)
    scaled, unit = attrs.get("LinkSpeed"), attrs.get("LinkSpeedUnits", "").strip().upper()
    if not scaled:
        return None
    if unit not in _UNIT_BPS:
        notes.append(f"line {line}: ignored unknown LinkSpeedUnits {unit!r}")
        return None
    return _positive_bps(scaled, _UNIT_BPS[unit], "LinkSpeed", line, notes)


def _positive_bps(text: str, scale: int, field: str, line: int, notes: list[str]) -> int | None:
    try:
        speed = float(text) * scale
    except ValueError:
        notes.append(f"line {line}: ignored unreadable {field} {text!r}")
        return None
    if not math.isfinite(speed) or round(speed) <= 0:
        return None
    return round(speed)
