"""The send buffer of Open vSwitch's userspace datapath: how many queued bytes it can hold.

The userspace datapath sends every frame through one packet socket per
ovs-vswitchd, and a frame stays charged to that socket's send buffer while
it waits in a port's queue; past the buffer, frames are dropped uncounted.
So how deep braid's port queues may be depends on it
(`braid.adapters.southbound.tc_queues`). The buffer is the host's
`net.core.wmem_default` when the socket is made, on the first frame
forwarded.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Final

__all__ = ["parse_switchd_send_buffer", "switchd_send_buffer", "switchd_send_room"]

WMEM_DEFAULT: Final = Path("/proc/sys/net/core/wmem_default")


def switchd_send_room(netns: str | None = None) -> int | None:
    """The send buffer ovs-vswitchd has, or will get when it makes its socket; `netns`:
    of the ovs-vswitchd running in that network namespace."""
    found = switchd_send_buffer(netns)
    if found is not None:
        return found
    try:
        return int(WMEM_DEFAULT.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def switchd_send_buffer(netns: str | None = None) -> int | None:
    """The send buffer of ovs-vswitchd's unbound packet socket, once it has one (`ss`,
    in network namespace `netns` if given: a socket is seen only from its own)."""
    where = [] if netns is None else ["-N", netns]
    try:
        out = subprocess.run(
            ["ss", *where, "-0", "-a", "-m", "-p", "-n"],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_switchd_send_buffer(out)


def parse_switchd_send_buffer(ss_output: str) -> int | None:
    """From `ss -0 -m -p` output: `tb` of the ovs-vswitchd socket bound to no interface."""
    for line in ss_output.splitlines():
        if "ovs-vswitchd" in line and re.search(r"\s(\[0\]|\*):\*\s", line):
            found = re.search(r"\btb(\d+)", line)
            if found:
                return int(found.group(1))
    return None
