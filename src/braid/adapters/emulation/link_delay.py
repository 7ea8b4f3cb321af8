"""Long-haul latency on an emulated link: braid's link emulator spliced into its veth pair.

The kernels here have no `netem`, so a link's one-way delay comes from
`braid-dp link`. A topology link is a veth pair between two bridges
(`X-ethN` on one, `Y-ethM` on the other). To delay it, the pair is replaced
by two pairs, `X-ethN`–`X-ethNd` and `Y-ethM`–`Y-ethMd`, the bridge ends
go back into their bridges under the same OpenFlow port numbers (compiled
rules stay valid), keep their htb rate limit (so the bottleneck queue stays
where it was, in front of the propagation delay), and braid-dp forwards
between the two `d` ends with the delay, both ways.

Splicing it in, rather than running braid-dp on the hosts' side, delays
exactly the links the topology declares a latency for, whatever path a
reservation takes; it costs one braid-dp (two forwarding threads) per
delayed link. Every braid-dp started here carries the emulation's process
mark, so `braid emulate clean` stops any that a crash left behind.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from braid.adapters.dataplane import LinkEmulator, LinkSettings
from braid.adapters.emulation.iperf import MARK

__all__ = ["SPLICE_SUFFIX", "LinkEnd", "splice_delay"]

SPLICE_SUFFIX: Final = "d"
_RAW_OFFLOADS: Final = ("tx", "off", "tso", "off", "gso", "off", "gro", "off")


@dataclass(frozen=True, slots=True)
class LinkEnd:
    """One end of a topology link: the bridge, its interface and OpenFlow port."""

    bridge: str
    interface: str
    port: int


def _run(argv: Sequence[str]) -> None:
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=30)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")


def splice_delay(
    ends: tuple[LinkEnd, LinkEnd],
    delay_ms: float,
    *,
    mtu: int,
    realtime: bool = False,
) -> LinkEmulator:
    """Replace the veth pair joining `ends` by braid-dp with `delay_ms` each way; started.

    The bridge ends come back without a rate limit: the caller sets it again
    (`EmulatedNetwork.set_link_rate`), after which the link is as before
    plus the delay.
    """
    first, second = ends
    _run(["ovs-vsctl", "del-port", first.bridge, first.interface,
          "--", "del-port", second.bridge, second.interface])  # fmt: skip
    _run(["ip", "link", "del", first.interface])  # takes its peer with it
    for end in ends:
        inner = end.interface + SPLICE_SUFFIX
        _run(["ip", "link", "add", end.interface, "type", "veth", "peer", "name", inner])
        for name in (end.interface, inner):
            _run(["ip", "link", "set", name, "mtu", str(mtu), "up"])
            # Raw-socket forwarding needs complete frames; OVS's userspace path needs
            # checksums filled in: no offloads on either end.
            subprocess.run(["ethtool", "-K", name, *_RAW_OFFLOADS], capture_output=True,
                           check=False, timeout=10)  # fmt: skip
        _run(["ovs-vsctl", "add-port", end.bridge, end.interface,
              "--", "set", "Interface", end.interface, f"ofport_request={end.port}"])  # fmt: skip
        # After the bridge took the port (adding it resets the interface's qdisc): the
        # htb layout Mininet gives a limited link, its rate set by the caller.
        _run(["tc", "qdisc", "replace", "dev", end.interface, "root", "handle", "5:0", "htb",
              "default", "1"])  # fmt: skip
        _run(["tc", "class", "replace", "dev", end.interface, "parent", "5:0", "classid", "5:1",
              "htb", "rate", "1000Mbit", "burst", "15k"])  # fmt: skip
    emulator = LinkEmulator(
        first.interface + SPLICE_SUFFIX,
        second.interface + SPLICE_SUFFIX,
        settings=LinkSettings(delay_ms=delay_ms),
        realtime=realtime,
    ).launched(env={MARK.split("=")[0]: MARK.split("=")[1]})
    emulator.start()
    return emulator
