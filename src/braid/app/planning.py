"""Batch planning: JSON lines of requests in, typed decisions out, in order.

`braid plan` (and the emulation's tenant runs) call these, so every batch
validates and decides alike; the CLI writes the decisions in the plan
contract (`adapters/plan_contract.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.planning.decisions import Decision, Invalid
from braid.core.planning.planner import Planner
from braid.core.planning.requests import parse_request


def plan_lines(
    topology: Topology,
    lines: Iterable[str],
    *,
    zone: str | None = None,
    now: int | None = None,
) -> Iterator[Decision]:
    """One decision per non-blank line, in order; bad lines give `Invalid` decisions.

    Local times without an offset are read in `zone`, day words against `now`
    (the caller's clock: batch planning reads none of its own).
    """
    planner = Planner(topology)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        yield decide_line(planner, line, number, zone=zone, now=now)


def decide_line(
    planner: Planner, line: str, number: int, *, zone: str | None = None, now: int | None = None
) -> Decision:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return Invalid("", f"not valid JSON ({exc.msg} at column {exc.colno})", line=number)
    request_id = data.get("id") if isinstance(data, dict) else None
    request_id = request_id if isinstance(request_id, str) else ""
    try:
        request = parse_request(data, planner.network.topology, zone=zone, now=now)
    except InputError as exc:
        return Invalid(request_id, str(exc), field=exc.field, line=number)
    return planner.handle(request)
