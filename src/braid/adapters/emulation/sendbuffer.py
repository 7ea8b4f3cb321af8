"""Room for Open vSwitch's queued frames: the send buffer of its userspace datapath's socket.

The userspace datapath hands every frame it forwards to the kernel through
one AF_PACKET socket (per ovs-vswitchd process), and a frame stays charged to
that socket's send buffer while it waits in a link's htb queue. The buffer is
`net.core.wmem_default` (208 KiB on most hosts) when the socket is created,
about 13 jumbo frames for all the queues of the whole emulated network
together. Beyond that, sends fail and Open vSwitch drops the frame without
counting it anywhere: not in the qdisc, not in the interface statistics. TCP
then sees losses long before any queue is full; with 16 flows over two
paths (two frames in flight each) most losses end in retransmission
timeouts and the paths run at half their rate.

So, for the lifetime of a session, the host's default send buffer is raised
(and its ceiling `net.core.wmem_max`, where lower) before Open vSwitch
creates that socket (on its first forwarded frame), and both are restored
afterwards. The saved values are kept in a file so that `braid emulate
clean` restores them after a killed run.
Only sockets created meanwhile in the host's root network namespace get the
larger default, and only sockets that do not size their own buffers (TCP
does) use it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

WMEM_DEFAULT: Final = Path("/proc/sys/net/core/wmem_default")
WMEM_MAX: Final = Path("/proc/sys/net/core/wmem_max")
SAVED: Final = Path("/run/braid-emulation.wmem_default")
# Every shaped queue of the experiments' networks at their default scales, full, with the
# kernel's per-frame overhead (a jumbo frame takes about 16 KiB of buffer).
WANTED_BYTES: Final = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class BufferSettings:
    """The host's `net.core.wmem_default` and `net.core.wmem_max`, in bytes."""

    default: int
    ceiling: int

    def raised(self, wanted: int = WANTED_BYTES) -> BufferSettings:
        """`wanted` as the default (and the ceiling, if lower); never lowers either."""
        default = max(self.default, wanted)
        return BufferSettings(default, max(self.ceiling, default))


@contextlib.contextmanager
def raised_send_buffer(wanted: int = WANTED_BYTES) -> Iterator[int]:
    """Raise the host's default send buffer for the block; yields the default in effect."""
    saved = saved_settings()  # a killed run's raise is restored at the end of this one
    original = saved or current_settings()
    target = original.raised(wanted)
    if saved is None and target == original:
        yield target.default
        return
    SAVED.write_text(f"{original.default} {original.ceiling}\n")
    _apply(target)
    try:
        yield target.default
    finally:
        restore_send_buffer()


def current_settings() -> BufferSettings:
    return BufferSettings(_read(WMEM_DEFAULT), _read(WMEM_MAX))


def saved_settings() -> BufferSettings | None:
    """The settings a raise replaced, while it is in effect (or after a run was killed)."""
    try:
        default, ceiling = (int(x) for x in SAVED.read_text().split())
    except (FileNotFoundError, ValueError):
        return None
    return BufferSettings(default, ceiling)


def restore_send_buffer() -> BufferSettings | None:
    """Put back the settings a raise replaced, if any are saved; returns them."""
    original = saved_settings()
    if original is not None:
        _apply(original)
        SAVED.unlink(missing_ok=True)
    return original


def _apply(settings: BufferSettings) -> None:
    # The kernel keeps the default within the ceiling at every step.
    if settings.ceiling >= _read(WMEM_MAX):
        WMEM_MAX.write_text(f"{settings.ceiling}\n")
        WMEM_DEFAULT.write_text(f"{settings.default}\n")
    else:
        WMEM_DEFAULT.write_text(f"{settings.default}\n")
        WMEM_MAX.write_text(f"{settings.ceiling}\n")


def _read(path: Path) -> int:
    return int(path.read_text().split()[0])
