"""From a compiled packet-split plan's edge side (core) to `braid-dp edge`'s config (wire)."""

from __future__ import annotations

from braid.adapters.dataplane.edge_protocol import (
    EdgeConfig,
    EdgePath,
    EdgeReservation,
    ReseqSettings,
)
from braid.core.rules.packet_split import EdgeSide

__all__ = ["edge_config"]


def edge_config(side: EdgeSide) -> EdgeConfig:
    """The config of the edge at `side.host`: its reservation's paths, weights and S/T/LRF/hold.

    The source and destination are the two hosts' addresses: only the reservation's
    own traffic is split; anything else from the host passes untagged.
    """
    reservation = EdgeReservation(
        id=side.reservation_id,
        paths=tuple(
            EdgePath(vlan=v, weight=w) for v, w in zip(side.vlans, side.weights, strict=True)
        ),
        src=side.src_ipv4,
        dst=side.dst_ipv4,
        burst=side.burst,
        resequence=side.resequence,
    )
    sizing = side.reseq
    reseq = ReseqSettings(
        buffer_size=sizing.buffer_size,
        threshold=sizing.threshold,
        lrf=sizing.lrf,
        hold_ms=sizing.hold_ms,
    )
    return EdgeConfig(reservations=(reservation,), reseq=reseq)
