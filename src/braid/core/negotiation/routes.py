"""From a domain-level path to the span each domain must carry (pure).

Between two consecutive domains the route takes the widest inter-domain link
(ties broken by id); the link's hand-off point (its end in the domain that
does not own it) is where one domain's span ends and the next one's begins.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from braid.core.errors import InputError
from braid.core.negotiation.domains import BorderLink, GlobalView


@dataclass(frozen=True, slots=True)
class Leg:
    domain: str
    entry: str
    exit: str


def route_legs(
    view: GlobalView, domains: Sequence[str], src_point: str, dst_point: str
) -> tuple[Leg, ...]:
    """The span of every domain on `domains`, from `src_point` to `dst_point`."""
    if len(domains) < 2:
        raise InputError("paths", "a domain path joins at least two domains")
    links = [_widest_link(view, a, b) for a, b in itertools.pairwise(domains)]
    points = [src_point, *(link.handoff for link in links), dst_point]
    return tuple(Leg(domain, points[i], points[i + 1]) for i, domain in enumerate(domains))


def route_links(view: GlobalView, domains: Sequence[str]) -> tuple[str, ...]:
    """The inter-domain links the route crosses, in order."""
    return tuple(_widest_link(view, a, b).id for a, b in itertools.pairwise(domains))


def _widest_link(view: GlobalView, a: str, b: str) -> BorderLink:
    between = [link for link in view.links.values() if {link.a_domain, link.b_domain} == {a, b}]
    if not between:
        raise InputError("paths", f"no link joins domains {a} and {b}")
    return min(between, key=lambda link: (-link.capacity, link.id))


def domain_pairs(view: GlobalView) -> list[tuple[str, str]]:
    """The inter-domain links as domain pairs, the shape domain_paths() takes."""
    return [(link.a_domain, link.b_domain) for link in view.links.values()]
