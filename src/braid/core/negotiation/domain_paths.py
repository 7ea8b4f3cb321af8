"""k candidate domain-level paths between two sites (seed 000 §4.1, Fig. 6a).

The orchestrator sees domains as nodes and inter-domain links as edges,
never a domain's inside. A candidate path is a simple sequence of domain ids
from the source site to the destination site; sites are endpoints only (a
site never carries transit traffic), while WANs and SDXs may be crossed.

Order: fewest domains first, then lexicographic on the domain ids, so the
result depends only on the graph, not on the order it was given in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from braid.core.errors import InputError
from braid.core.negotiation.strategies import DomainPath

KINDS = ("site", "wan", "sdx", "nsi")


def domain_paths(
    kinds: Mapping[str, str],
    links: Iterable[tuple[str, str]],
    src: str,
    dst: str,
    k: int,
    *,
    max_domains: int | None = None,
) -> list[DomainPath]:
    """Up to `k` simple domain paths from site `src` to site `dst`, shortest first.

    `kinds` maps every domain id to its kind (``site``, ``wan``, ``sdx`` or ``nsi``);
    `links` are the inter-domain links as unordered pairs of domain ids
    (parallel links collapse into one edge). `max_domains` bounds a path's
    length (default: every domain). Raises `InputError` naming the field on
    unknown domains or kinds; an empty list means the sites are not connected.
    """
    _check(kinds, src, dst, k)
    neighbours = _adjacency(kinds, links)
    limit = len(kinds) if max_domains is None else max_domains
    found: list[DomainPath] = []
    # Breadth-first over partial paths, one length at a time, each layer sorted:
    # the first k complete paths are then the k shortest in lexicographic order.
    layer: list[DomainPath] = [(src,)]
    while layer and len(found) < k and len(layer[0]) < limit:
        longer: list[DomainPath] = []
        for partial in layer:
            for nxt in neighbours[partial[-1]]:
                if nxt in partial:
                    continue
                if nxt == dst:
                    found.append((*partial, nxt))
                elif kinds[nxt] != "site":
                    longer.append((*partial, nxt))
        layer = longer
    return sorted(found, key=lambda p: (len(p), p))[:k]


def _adjacency(kinds: Mapping[str, str], links: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    sets: dict[str, set[str]] = {d: set() for d in kinds}
    for index, (a, b) in enumerate(links):
        for end in (a, b):
            if end not in kinds:
                raise InputError(f"links[{index}]", f"unknown domain {end!r}")
        if a == b:
            raise InputError(f"links[{index}]", f"links domain {a!r} to itself")
        sets[a].add(b)
        sets[b].add(a)
    return {d: sorted(n) for d, n in sets.items()}


def _check(kinds: Mapping[str, str], src: str, dst: str, k: int) -> None:
    for domain, kind in kinds.items():
        if kind not in KINDS:
            raise InputError(
                f"domains[{domain}].kind", f"{kind!r} is not one of {', '.join(KINDS)}"
            )
    for field, site in (("src", src), ("dst", dst)):
        if site not in kinds:
            raise InputError(field, f"unknown domain {site!r}")
        if kinds[site] != "site":
            raise InputError(field, f"domain {site!r} is a {kinds[site]}, not a site")
    if src == dst:
        raise InputError("dst", "source and destination are the same site")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError("k", f"must be a positive integer, got {k!r}")
