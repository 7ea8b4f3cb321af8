"""VLAN ranges as topologies give them: `100-199`, `100-199,300`, a number, or [low, high]."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from braid.core.errors import TopologyError

__all__ = [
    "ALL_VLANS",
    "VLAN_MAX",
    "VLAN_MIN",
    "VlanSpans",
    "allowed_vlans",
    "format_vlan_spans",
    "merge_vlan_spans",
    "parse_vlan_spans",
]

VLAN_MIN: Final = 1
VLAN_MAX: Final = 4094

VlanSpans = tuple[tuple[int, int], ...]  # sorted, merged, inclusive [low, high] pairs
ALL_VLANS: Final[VlanSpans] = ((VLAN_MIN, VLAN_MAX),)

_SPAN: Final = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def parse_vlan_spans(value: object, field: str) -> VlanSpans:
    """The VLANs `value` allows, merged; errors name `field` and say what a range looks like."""
    if isinstance(value, bool) or value is None:
        raise TopologyError(field, "missing; give a VLAN range like 100-199")
    if isinstance(value, int):
        pairs = [(value, value)]
    elif isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value):
        pairs = [(value[0], value[1])]
    elif isinstance(value, str) and value.strip():
        pairs = [_span(part, field, value) for part in value.split(",")]
    else:
        raise TopologyError(field, f"must look like 100-199 or 100-199,300; got {value!r}")
    for low, high in pairs:
        if not VLAN_MIN <= low <= high <= VLAN_MAX:
            raise TopologyError(
                field, f"must be ascending ranges within {VLAN_MIN}-{VLAN_MAX}; got {value!r}"
            )
    return merge_vlan_spans(pairs)


def allowed_vlans(spans: Sequence[VlanSpans]) -> range | tuple[int, ...]:
    """The VLANs every one of `spans` allows, in ascending order."""
    if all(len(s) == 1 for s in spans):
        low = max((s[0][0] for s in spans), default=VLAN_MIN)
        high = min((s[0][1] for s in spans), default=VLAN_MAX)
        return range(low, max(low, high + 1))
    common = set(range(VLAN_MIN, VLAN_MAX + 1))
    for s in spans:
        common &= {v for low, high in s for v in range(low, high + 1)}
    return tuple(sorted(common))


def _span(part: str, field: str, whole: str) -> tuple[int, int]:
    found = _SPAN.fullmatch(part)
    if found is None:
        raise TopologyError(field, f"must look like 100-199 or 100-199,300; got {whole!r}")
    low = int(found[1])
    return low, int(found[2]) if found[2] else low


def merge_vlan_spans(pairs: Sequence[tuple[int, int]]) -> VlanSpans:
    """`pairs` sorted, with overlapping or adjacent spans joined."""
    out: list[tuple[int, int]] = []
    for low, high in sorted(pairs):
        if out and low <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], high))
        else:
            out.append((low, high))
    return tuple(out)


def format_vlan_spans(spans: VlanSpans) -> str:
    """Spans as a topology writes them: `100-199,300`."""
    return ",".join(f"{low}-{high}" if low != high else str(low) for low, high in spans)
