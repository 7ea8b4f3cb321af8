"""A published view on the wire: what an agent sends is what the orchestrator reads back;
a bad view is refused whole, naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from braid.adapters.rpc.published_views import part_from_pb, part_to_pb
from braid.core.errors import InputError
from braid.core.negotiation.domains import MultiDomainNetwork, global_view_from_dict
from braid.core.negotiation.published import domain_part

EXAMPLE = Path(__file__).resolve().parents[4] / "src" / "braid" / "examples" / "fig6a.yaml"


def test_every_fig6a_view_goes_over_the_wire_unchanged() -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    network = MultiDomainNetwork("fig6a", data, global_view_from_dict(data))
    for domain in network.view.domains:
        part = domain_part(network, domain)
        wire = part_to_pb(part)
        assert wire.version == part.version
        assert part_from_pb(wire) == part


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("owner", "elsewhere", "peerings[0].owner"),
        ("vlan_high", 5000, "peerings[0].vlan_low"),
        ("capacity_bps", 0, "peerings[0].capacity_bps"),
        ("b_domain", "site-a", "peerings[0].a_domain"),
    ],
)
def test_a_bad_peering_is_refused_by_name(field: str, value: object, named: str) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    network = MultiDomainNetwork("fig6a", data, global_view_from_dict(data))
    wire = part_to_pb(domain_part(network, "rn1"))
    setattr(wire.peerings[0], field, value)
    with pytest.raises(InputError) as caught:
        part_from_pb(wire)
    assert caught.value.field == named
