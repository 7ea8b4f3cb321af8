"""An iperf3 UDP client above a reservation's rate, and what its server got."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from braid.adapters.emulation.iperf import Shell, close_pipes

__all__ = ["received", "udp"]


def udp(
    client: Shell, server_ip: str, rate_bps: int, seconds: int, port: int = 5201, length: int = 8000
) -> Any:
    """Start an iperf3 UDP client (datagrams of `length` bytes); `received` reads its result."""
    argv = ["iperf3", "-J", "-u", "-c", server_ip, "-p", str(port), "-b", str(rate_bps)]
    argv += ["-t", str(seconds), "-l", str(length), "--connect-timeout", "3000"]
    return client.popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def received(proc: Any, seconds: int) -> float:
    """What the server got, bit/s, from a UDP client's JSON report."""
    out, _ = proc.communicate(timeout=seconds + 30)
    close_pipes(proc)
    report = json.loads(out)
    if report.get("error"):
        raise AssertionError(f"iperf3: {report['error']}")
    end = report["end"]
    if "sum_received" in end:
        return float(end["sum_received"]["bits_per_second"])
    total = end["sum"]
    return float(total["bits_per_second"]) * (1 - float(total["lost_percent"]) / 100)
