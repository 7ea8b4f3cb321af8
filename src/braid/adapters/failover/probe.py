"""A streaming UDP round-trip probe and the echo that answers it.

The probe sends a numbered datagram every 1/rate seconds and reports each
one as soon as it is known: answered (its round trip, timed with the
monotonic clock in nanoseconds) or lost (no answer within `timeout`). Given
`late_after` (the monitor's RTT threshold), a probe still unanswered then is
reported at once as late, its waiting time a lower bound of its round trip:
a path that got slower is seen a threshold after the probe left, not a
whole round trip later; its answer, if it comes, is not reported again. A send
that fails (no route, interface down) is a lost probe, not an exit: a
monitor that loses its target keeps probing. The packet is the one of
`braid.adapters.dataplane.rtt`, so either echo answers either probe.

`netns` (a path such as /proc/PID/ns/net) opens the socket inside that
network namespace, so a monitor in the host's namespace can probe from an
emulated host's.
"""

from __future__ import annotations

import ctypes
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from braid.adapters.listening import bind

__all__ = ["ProbeResult", "UdpEcho", "UdpRttProbe", "udp_socket"]

_PACKET: Final = struct.Struct("!QQ")  # sequence number, send time (monotonic ns)
_CLONE_NEWNET: Final = 0x40000000


@dataclass(frozen=True, slots=True)
class ProbeResult:
    sent: float  # wall clock, seconds
    known: float  # wall clock when the answer (or its absence) was known
    rtt_ms: float | None
    error: str | None = None  # why the send failed, when it did
    late: bool = False  # not answered yet after `late_after`: rtt_ms is a lower bound


def udp_socket(netns: str | None = None) -> socket.socket:
    """A UDP socket, made inside `netns` when given (the thread's namespace is restored)."""
    if netns is None:
        return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    libc = ctypes.CDLL(None, use_errno=True)
    # setns moves only the calling thread; a socket keeps the namespace it was made in.
    own = os.open(f"/proc/self/task/{threading.get_native_id()}/ns/net", os.O_RDONLY)
    target = os.open(netns, os.O_RDONLY)
    try:
        if libc.setns(target, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"cannot enter network namespace {netns}")
        try:
            return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        finally:
            libc.setns(own, _CLONE_NEWNET)
    finally:
        os.close(own)
        os.close(target)


class UdpRttProbe:
    """Probes `host:port` at `rate_hz` until `stop` is set, reporting to `report`."""

    def __init__(
        self,
        host: str,
        port: int,
        rate_hz: float,
        timeout: float,
        netns: str | None = None,
        wall: Callable[[], float] = time.time,
        late_after: float | None = None,
    ) -> None:
        self.host, self.port = host, port
        self.late_after = late_after
        self.interval = 1.0 / rate_hz
        self.timeout = timeout
        self.netns = netns
        self._wall = wall

    def run(self, report: Callable[[ProbeResult], None], stop: threading.Event) -> None:
        with udp_socket(self.netns) as sock:
            sock.setblocking(False)
            pending: dict[int, tuple[int, float]] = {}  # seq -> (monotonic ns, wall sent)
            self._late: set[int] = set()
            seq = 0
            next_send = time.monotonic()
            while not stop.is_set():
                now = time.monotonic()
                if now >= next_send:
                    self._send(sock, seq, pending, report)
                    seq += 1
                    next_send += self.interval
                    if next_send < now:  # fell behind (a busy host): do not burst
                        next_send = now + self.interval
                self._expire(pending, report)
                wait = max(0.0, min(next_send - time.monotonic(), 0.005))
                ready, _, _ = select.select([sock], [], [], wait)
                if ready:
                    self._receive(sock, pending, report)

    def _send(
        self,
        sock: socket.socket,
        seq: int,
        pending: dict[int, tuple[int, float]],
        report: Callable[[ProbeResult], None],
    ) -> None:
        sent_ns, wall = time.monotonic_ns(), self._wall()
        try:
            sock.sendto(_PACKET.pack(seq, sent_ns), (self.host, self.port))
        except OSError as exc:
            report(ProbeResult(wall, wall, None, exc.strerror or str(exc)))
            return
        pending[seq] = (sent_ns, wall)

    def _expire(
        self, pending: dict[int, tuple[int, float]], report: Callable[[ProbeResult], None]
    ) -> None:
        now = time.monotonic_ns()
        limit = now - int(self.timeout * 1e9)
        for seq in [s for s, (ns, _) in pending.items() if ns < limit]:
            _, wall = pending.pop(seq)
            if seq not in self._late:
                report(ProbeResult(wall, self._wall(), None))
            self._late.discard(seq)
        if self.late_after is None:
            return
        late = now - int(self.late_after * 1e9)
        for seq, (ns, wall) in pending.items():
            if ns < late and seq not in self._late:
                self._late.add(seq)
                report(ProbeResult(wall, self._wall(), (now - ns) / 1e6, late=True))

    def _receive(
        self,
        sock: socket.socket,
        pending: dict[int, tuple[int, float]],
        report: Callable[[ProbeResult], None],
    ) -> None:
        while True:
            try:
                data = sock.recv(2048)
            except (BlockingIOError, ConnectionRefusedError):
                return  # an ICMP refusal is a lost probe; its timeout reports it
            arrived = time.monotonic_ns()
            if len(data) != _PACKET.size:
                continue
            seq, sent_ns = _PACKET.unpack(data)
            if seq in pending:
                _, wall = pending.pop(seq)
                if seq in self._late:
                    self._late.discard(seq)
                else:
                    report(ProbeResult(wall, self._wall(), (arrived - sent_ns) / 1e6))


class UdpEcho:
    """Answers probes on `port` in a thread until closed (the far site's half)."""

    def __init__(self, port: int, netns: str | None = None, address: str = "0.0.0.0") -> None:
        self._sock = udp_socket(netns)
        try:
            bind(self._sock, address, port)  # a taken port: AddressInUseError
        except BaseException:
            self._sock.close()
            raise
        self.port = self._sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="braid-echo", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._sock], [], [], 0.2)
            if ready:
                try:
                    data, peer = self._sock.recvfrom(2048)
                    self._sock.sendto(data, peer)
                except OSError:
                    continue  # the way back is down: the prober counts a loss

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()

    def __enter__(self) -> UdpEcho:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
