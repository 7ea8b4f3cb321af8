"""Topology files to braid's topology dict, and on to the core's model.

Supported: braid's own format as YAML (.yaml, .yml) or JSON (.json), ESnet
OSCARS topology JSON (.json with top-level `devices` and `adjcies`), and
Internet Topology Zoo GraphML (.graphml). Converted formats list what they
skipped or left to defaults under the top-level key `notes`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from braid.adapters.graphml import GraphMLFormatError, graphml_to_dict
from braid.adapters.oscars import OscarsFormatError, is_oscars, oscars_to_dict
from braid.core.errors import BraidError

if TYPE_CHECKING:
    from braid.core.model.topology import Topology

SUPPORTED_SUFFIXES = (".yaml", ".yml", ".json", ".graphml")


class TopologyFileError(BraidError, ValueError):
    """A topology file that cannot be read; the message names the file and, if known, the line."""

    def __init__(self, path: Path, message: str, line: int | None = None) -> None:
        where = str(path) if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.message = message


def read_topology_dict(path: Path) -> dict[str, Any]:
    """Read a topology file into braid's dict format, choosing the reader by extension."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise TopologyFileError(
            path,
            f"unknown file extension {path.suffix or '(none)'!r}; "
            f"supported: {', '.join(SUPPORTED_SUFFIXES)}",
        )
    raw = _read_bytes(path)
    if suffix == ".graphml":
        return _convert_graphml(path, raw)
    data = _load_json(path, raw) if suffix == ".json" else _load_yaml(path, raw)
    if not isinstance(data, dict):
        kind = "an empty document" if data is None else f"a {type(data).__name__}"
        raise TopologyFileError(
            path, f"the top level must be a mapping with 'nodes' and 'links', not {kind}"
        )
    if suffix == ".json" and is_oscars(data):
        try:
            return oscars_to_dict(data)
        except OscarsFormatError as exc:
            raise TopologyFileError(path, f"OSCARS topology: {exc}") from exc
    return data


def load_topology(
    path: Path,
    *,
    default_capacity_bps: int | None = None,
    default_latency_ms: float = 1.0,
) -> Topology:
    """Read a topology file and validate it into the core's model."""
    # Imported here so that reading files does not depend on the core's import graph.
    from braid.core.model.topology import topology_from_dict

    return topology_from_dict(
        read_topology_dict(path),
        default_capacity_bps=default_capacity_bps,
        default_latency_ms=default_latency_ms,
    )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise TopologyFileError(path, "file not found") from exc
    except IsADirectoryError as exc:
        raise TopologyFileError(path, "is a directory, not a file") from exc
    except OSError as exc:
        raise TopologyFileError(path, f"cannot read: {exc.strerror or exc}") from exc


def _load_json(path: Path, raw: bytes) -> object:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TopologyFileError(
            path, f"malformed JSON: {exc.msg} (column {exc.colno})", exc.lineno
        ) from exc
    except UnicodeDecodeError as exc:
        raise TopologyFileError(path, f"not valid UTF-8/16/32 text: {exc.reason}") from exc


def _load_yaml(path: Path, raw: bytes) -> object:
    try:
        return yaml.safe_load(raw)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        context = exc.context
        if context and exc.context_mark is not None and exc.context_mark is not mark:
            context += f" (opened on line {exc.context_mark.line + 1})"
        reason = "; ".join(part for part in (context, exc.problem) if part)
        if mark is None:
            raise TopologyFileError(path, f"malformed YAML: {reason}") from exc
        raise TopologyFileError(
            path, f"malformed YAML: {reason} (column {mark.column + 1})", mark.line + 1
        ) from exc
    except yaml.YAMLError as exc:
        # Reader errors (bad encoding, control characters) carry no line mark.
        raise TopologyFileError(path, f"unreadable YAML: {exc}") from exc


def _convert_graphml(path: Path, raw: bytes) -> dict[str, Any]:
    try:
        return graphml_to_dict(raw)
    except GraphMLFormatError as exc:
        raise TopologyFileError(path, exc.message, exc.line) from exc
