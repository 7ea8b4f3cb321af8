"""braid's own data-plane elements (the Rust program `braid-dp`), started and driven from Python.

`LinkEmulator` runs `braid-dp link` between two interfaces and changes its
delay, jitter, loss, rate and cuts at run time over the control socket.
"""

from braid.adapters.dataplane.binary import BraidDpMissingError, find_braid_dp
from braid.adapters.dataplane.link_emulator import LinkEmulator, LinkEmulatorError
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
    "GilbertElliott",
    "LinkEmulator",
    "LinkEmulatorError",
    "LinkSettings",
    "find_braid_dp",
]
