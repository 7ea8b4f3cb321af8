"""A UDP probe stream between two emulated hosts: numbered packets at a fixed rate.

`python -m braid.adapters.emulation.probe send IP PORT RATE SECONDS OUT` sends
packets carrying a sequence number and the send time; `... receive PORT
SECONDS OUT` records each packet's number, send time and arrival time. Both
write JSON to OUT when done. Hosts of one emulation share the machine's
clock, so send and arrival times compare directly. `ProbeRun` starts the two
in their hosts' namespaces and reads the result.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from braid.adapters.emulation.iperf import Shell, close_pipes

__all__ = ["ProbeRun", "ProbeTrace"]

_PACKET: Final = struct.Struct("!Qd")  # sequence number, send time
_GRACE: Final = 1.0  # the receiver listens this much longer than the sender sends


@dataclass(frozen=True, slots=True)
class ProbeTrace:
    """What was sent, and what arrived: (sequence, sent at, arrived at), in arrival order."""

    sent: int
    first_sent_at: float
    rate: int
    arrivals: tuple[tuple[int, float, float], ...]

    def lost_between(self, begin: float, end: float) -> int:
        """Packets due to be sent in [begin, end) that never arrived."""
        first = max(0, math.ceil((begin - self.first_sent_at) * self.rate))
        last = min(self.sent, math.ceil((end - self.first_sent_at) * self.rate))
        arrived = {seq for seq, _, _ in self.arrivals}
        return sum(1 for seq in range(first, last) if seq not in arrived)

    def arrived_between(self, begin: float, end: float) -> int:
        """Packets that arrived in [begin, end), whenever they were sent."""
        return sum(1 for _, _, at in self.arrivals if begin <= at < end)

    def first_arrival(self) -> float | None:
        return min((at for _, _, at in self.arrivals), default=None)


class ProbeRun:
    """A sender in one host and a receiver in another, started together."""

    def __init__(
        self,
        sender: Shell,
        receiver: Shell,
        receiver_ip: str,
        *,
        port: int,
        rate: int,
        seconds: float,
        workdir: Path,
    ) -> None:
        self.outputs = (workdir / "probe-send.json", workdir / "probe-receive.json")
        module = [sys.executable, "-m", "braid.adapters.emulation.probe"]
        listen = str(seconds + 2 * _GRACE)
        self._receiver = receiver.popen(
            [*module, "receive", str(port), listen, str(self.outputs[1])],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(_GRACE)  # bound before the first packet leaves
        self._sender = sender.popen(
            [
                *module,
                "send",
                receiver_ip,
                str(port),
                str(rate),
                str(seconds),
                str(self.outputs[0]),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.seconds = seconds

    def stop(self) -> None:
        """End both ends now (after a failure elsewhere); nothing is read."""
        for proc in (self._sender, self._receiver):
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            close_pipes(proc)

    def finish(self) -> ProbeTrace:
        """Wait for both ends, then read what they saw."""
        for proc in (self._sender, self._receiver):
            try:
                proc.wait(timeout=self.seconds + 10)
            finally:
                close_pipes(proc)
        sent = json.loads(self.outputs[0].read_text())
        received = json.loads(self.outputs[1].read_text())
        arrivals = tuple((int(s), float(t), float(a)) for s, t, a in received["arrivals"])
        return ProbeTrace(int(sent["sent"]), float(sent["first"]), int(sent["rate"]), arrivals)


def send(ip: str, port: int, rate: int, seconds: float, out: Path) -> None:
    """`rate` packets a second for `seconds`, on a fixed schedule (late packets catch up)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    first = time.time()
    count = int(rate * seconds)
    for seq in range(count):
        due = first + seq / rate
        pause = due - time.time()
        if pause > 0:
            time.sleep(pause)
        with contextlib.suppress(OSError):  # no route yet is a lost packet, not a stop
            sock.sendto(_PACKET.pack(seq, time.time()), (ip, port))
    sock.close()
    out.write_text(json.dumps({"sent": count, "first": first, "rate": rate}))


def receive(port: int, seconds: float, out: Path) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("0.0.0.0", port))
    sock.settimeout(0.2)
    arrivals: list[tuple[int, float, float]] = []
    end = time.time() + seconds
    while time.time() < end:
        try:
            data = sock.recv(64)
        except TimeoutError:
            continue
        if len(data) >= _PACKET.size:
            seq, sent_at = _PACKET.unpack_from(data)
            arrivals.append((seq, sent_at, time.time()))
    sock.close()
    out.write_text(json.dumps({"arrivals": arrivals}))


def main(argv: list[str]) -> int:
    command, args = argv[0], argv[1:]
    if command == "send":
        send(args[0], int(args[1]), int(args[2]), float(args[3]), Path(args[4]))
    elif command == "receive":
        receive(int(args[0]), float(args[1]), Path(args[2]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
