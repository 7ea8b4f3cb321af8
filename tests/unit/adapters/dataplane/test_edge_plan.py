"""A packet-split plan's edges become braid-dp edge configs carrying the plan's numbers."""

from __future__ import annotations

from braid.adapters.dataplane.edge_plan import edge_config
from braid.core.rules.packet_split import compile_packet_split
from tests.unit.core.rules.scenarios import DST_IP, SRC_IP, two_path_scenario


def test_each_side_gets_its_reservation_paths_weights_and_resequencer() -> None:
    scenario = two_path_scenario()
    plan = compile_packet_split(
        scenario.request, scenario.topology, scenario.ports, resequence=True, burst=4
    )
    sending, receiving = (edge_config(side).as_json() for side in plan.edges)
    reservations = sending["reservations"]
    assert isinstance(reservations, list)
    (reservation,) = reservations
    assert reservation == {
        "id": "r1",
        "src": SRC_IP,
        "dst": DST_IP,
        "paths": [
            {"vlan": v, "weight": w} for v, w in zip(plan.rules.vlans, (0.75, 0.25), strict=True)
        ],
        "burst": 4,
        "resequence": True,
    }
    sizing = plan.edges[0].reseq
    assert sending["reseq"] == {
        "buffer_size": sizing.buffer_size,
        "threshold": sizing.threshold,
        "lrf": 20,
        "hold_ms": sizing.hold_ms,
    }
    backs = receiving["reservations"]
    assert isinstance(backs, list)
    (back,) = backs
    assert (back["src"], back["dst"]) == (DST_IP, SRC_IP)
