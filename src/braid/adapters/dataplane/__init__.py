"""braid's own data-plane elements (the Rust program `braid-dp`), started and driven from Python.

`LinkEmulator` runs `braid-dp link` between two interfaces and changes its
delay, jitter, loss, rate and cuts at run time over the control socket.
`MultipathEdge` runs `braid-dp edge` at a site's edge: per-packet weighted
round robin of a reservation's packets over VLAN paths, and TCP resequencing
of what arrives on them.
"""

from braid.adapters.dataplane.binary import BraidDpMissingError, find_braid_dp
from braid.adapters.dataplane.edge_plan import edge_config
from braid.adapters.dataplane.edge_protocol import (
    EdgeConfig,
    EdgeCounters,
    EdgePath,
    EdgeReservation,
    PathCounters,
    ReseqSettings,
    ToHostCounters,
)
from braid.adapters.dataplane.link_emulator import LinkEmulator, LinkEmulatorError
from braid.adapters.dataplane.multipath_edge import MultipathEdge, MultipathEdgeError
from braid.adapters.dataplane.protocol import (
    ControlError,
    Direction,
    DirectionCounters,
    GilbertElliott,
    LinkSettings,
)

__all__ = [
    "BraidDpMissingError",
    "ControlError",
    "Direction",
    "DirectionCounters",
    "EdgeConfig",
    "EdgeCounters",
    "EdgePath",
    "EdgeReservation",
    "GilbertElliott",
    "LinkEmulator",
    "LinkEmulatorError",
    "LinkSettings",
    "MultipathEdge",
    "MultipathEdgeError",
    "PathCounters",
    "ReseqSettings",
    "ToHostCounters",
    "edge_config",
    "find_braid_dp",
]
