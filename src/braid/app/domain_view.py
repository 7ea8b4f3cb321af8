"""The multi-domain network as a front end shows it: domains, their points, border links.

Read from the orchestrator's global view (domains, border points, inter-domain
links) and the topology file's node lists, so a booking form can offer
`DOMAIN:POINT` endpoints. Any signed-in caller may read it: it names what a
request may name, nothing about anyone's bookings.
"""

from __future__ import annotations

from dataclasses import dataclass

from braid.app.interdomain import InterdomainService
from braid.app.records import User

__all__ = ["DomainEntry", "DomainLink", "DomainNetwork", "domain_network"]


@dataclass(frozen=True, slots=True)
class DomainEntry:
    id: str
    kind: str  # site, wan, sdx or nsi
    visible: bool  # False: a blind domain (answers only yes or no)
    points: tuple[str, ...]  # every node of the domain, its border points last
    borders: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DomainLink:
    id: str
    a: str
    b: str
    a_domain: str
    b_domain: str
    capacity: int  # bit/s each way
    vlans: tuple[int, int]
    owner: str


@dataclass(frozen=True, slots=True)
class DomainNetwork:
    domains: tuple[DomainEntry, ...]
    links: tuple[DomainLink, ...]
    strategy: str  # the server's default
    max_paths: int


def domain_network(service: InterdomainService, user: User) -> DomainNetwork:
    """The domains (sites first), their points, and the links between domains."""
    del user  # any signed-in caller
    view = service.orchestrator.view
    domains = []
    for spec in sorted(view.domains.values(), key=lambda d: (d.kind != "site", d.id)):
        borders = tuple(sorted(view.borders.get(spec.id, frozenset())))
        inside = sorted(service.points.get(spec.id, frozenset()) - set(borders))
        points = (*inside, *borders)
        domains.append(DomainEntry(spec.id, spec.kind, spec.visible, points, borders))
    links = tuple(
        DomainLink(
            link.id,
            link.a,
            link.b,
            link.a_domain,
            link.b_domain,
            link.capacity,
            (link.vlans.low, link.vlans.high),
            link.owner,
        )
        for link in sorted(view.links.values(), key=lambda link: link.id)
    )
    config = service.orchestrator.config
    return DomainNetwork(tuple(domains), links, config.strategy, config.max_paths)
