"""An NSI connection as braid keeps it: the request, the three states, the edge VLANs."""

from __future__ import annotations

from dataclasses import dataclass

from braid.app.nsi.messages import Criteria
from braid.core.nsi.connection import ConnectionStates

__all__ = ["Connection"]


@dataclass(frozen=True, slots=True)
class Connection:
    """`id` is also the id of braid's reservation for it (none when the reserve failed).

    `ports` are the source and destination ports (node ids) and `vlans` the
    VLAN chosen at each; `reply_to` is where notifications go.
    """

    id: str
    requester_nsa: str
    reply_to: str | None
    global_reservation_id: str | None
    description: str | None
    criteria: Criteria
    ports: tuple[str, str]
    vlans: tuple[int, int]
    states: ConnectionStates
    booked: bool  # whether braid holds a reservation under `id`
    start: int
    end: int
    data_plane_active: bool = False
    notification_id: int = 0
    version: int = 0
