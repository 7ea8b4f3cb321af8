"""A domain's abstract view on the wire (`DomainAgent.View`): encode, and decode with checks.

The orchestrator trusts nothing it is sent: a view with a bad field is
refused whole (`InputError` naming the field), and the orchestrator keeps
what it had.
"""

from __future__ import annotations

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.core.errors import InputError
from braid.core.model.vlans import VLAN_MAX, VLAN_MIN
from braid.core.negotiation.domains import BorderLink, VlanRange
from braid.core.negotiation.published import DomainPart

__all__ = ["part_from_pb", "part_to_pb"]

KIND_OF = {"site": pb.DOMAIN_KIND_SITE, "wan": pb.DOMAIN_KIND_WAN, "sdx": pb.DOMAIN_KIND_SDX}
_KIND_NAME = {value: name for name, value in KIND_OF.items()}


def part_to_pb(part: DomainPart) -> pb.DomainView:
    return pb.DomainView(
        domain=part.domain,
        kind=KIND_OF[part.kind],
        visible=part.visible,
        points=sorted(part.points),
        peerings=[
            pb.Peering(
                link=link.id,
                a=link.a,
                b=link.b,
                a_domain=link.a_domain,
                b_domain=link.b_domain,
                capacity_bps=link.capacity,
                vlan_low=link.vlans.low,
                vlan_high=link.vlans.high,
                owner=link.owner,
            )
            for link in part.peerings
        ],
        version=part.version,
    )


def part_from_pb(view: pb.DomainView) -> DomainPart:
    """The part a `View` reply describes; InputError (naming the field) on a bad one."""
    if not view.domain:
        raise InputError("domain", "missing")
    kind = _KIND_NAME.get(view.kind)
    if kind is None:
        raise InputError("kind", f"unknown domain kind {view.kind}")
    points = frozenset(view.points)
    peerings = tuple(
        _peering(p, f"peerings[{i}]", view.domain) for i, p in enumerate(view.peerings)
    )
    return DomainPart(view.domain, kind, view.visible, points, peerings)


def _peering(p: pb.Peering, where: str, domain: str) -> BorderLink:
    if not p.link or not p.a or not p.b:
        raise InputError(f"{where}.link", "a peering needs a link id and both ends")
    if domain not in (p.a_domain, p.b_domain) or p.a_domain == p.b_domain:
        raise InputError(f"{where}.a_domain", f"must join {domain} to another domain")
    if p.owner not in (p.a_domain, p.b_domain):
        raise InputError(f"{where}.owner", f"must be {p.a_domain} or {p.b_domain}")
    if p.capacity_bps <= 0:
        raise InputError(f"{where}.capacity_bps", "must be positive")
    if not VLAN_MIN <= p.vlan_low <= p.vlan_high <= VLAN_MAX:
        raise InputError(f"{where}.vlan_low", f"a VLAN range within {VLAN_MIN}..{VLAN_MAX}")
    vlans = VlanRange(p.vlan_low, p.vlan_high)
    return BorderLink(p.link, p.a, p.b, p.a_domain, p.b_domain, p.capacity_bps, vlans, p.owner)
