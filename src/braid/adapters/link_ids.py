"""Link ids for imported topologies, where the source file gives none we can use."""

from __future__ import annotations


def unique_link_id(a: str, b: str, used: set[str]) -> str:
    """'a-b' for the first link, then 'a-b-2', 'a-b-3', ...; deterministic in file order."""
    candidate, n = f"{a}-{b}", 1
    while candidate in used:
        n += 1
        candidate = f"{a}-{b}-{n}"
    used.add(candidate)
    return candidate
