"""Batch planning service: JSON lines of requests in, JSON decisions out.

The CLI (`braid plan`) and later front ends call this one function so that
every way in validates and decides alike.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.planning import decisions as d
from braid.core.planning.planner import Planner
from braid.core.planning.requests import parse_request


def plan_lines(topology: Topology, lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """One decision per non-blank line, in order; bad lines give `error` decisions."""
    planner = Planner(topology)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        yield decide_line(planner, line, number)


def decide_line(planner: Planner, line: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return d.error("", f"not valid JSON ({exc.msg} at column {exc.colno})", line=number)
    request_id = data.get("id") if isinstance(data, dict) else None
    request_id = request_id if isinstance(request_id, str) else ""
    try:
        request = parse_request(data, planner.network.topology)
    except InputError as exc:
        return d.error(request_id, str(exc), field=exc.field, line=number)
    return planner.handle(request)
