"""Round-trip times between two emulated hosts: braid's UDP echo and probe in their namespaces.

The probe (`braid.adapters.dataplane.rtt`) times in nanoseconds and needs
nothing installed; its datagrams follow the same rules as the hosts' TCP.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Final

from braid.adapters.emulation.iperf import Shell, close_pipes

__all__ = ["udp_rtts"]

ECHO_PORT: Final = 7010
_INTERVAL: Final = 0.05


def udp_rtts(sender: Shell, echo: Shell, echo_ip: str, count: int = 20) -> list[float | None]:
    """`count` round trips (ms) from `sender` to an echo on `echo`; None for a lost one."""
    module = [sys.executable, "-m", "braid.adapters.dataplane.rtt"]
    listen = count * _INTERVAL + 5.0
    server = echo.popen([*module, "echo", str(ECHO_PORT), str(listen)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        time.sleep(0.3)  # bound before the first datagram leaves
        client = sender.popen([*module, "probe", echo_ip, str(ECHO_PORT), str(count),
                               str(_INTERVAL)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)  # fmt: skip
        try:
            out, _ = client.communicate(timeout=listen + 10)
        finally:
            close_pipes(client)
    finally:
        server.kill()
        server.wait(timeout=10)
        close_pipes(server)
    values = json.loads(out)
    return [None if v is None else float(v) for v in values]
