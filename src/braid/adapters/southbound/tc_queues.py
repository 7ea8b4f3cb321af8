"""braid's port queues as Linux traffic control: one HTB tree per switch port netdev.

Open vSwitch's userspace datapath does not hand `set_queue` to the kernel
(with OVS's own `linux-htb` QoS every frame lands in the default class), so
braid shapes the port's netdev itself and recognises a queue's frames by
their path VLAN, which is the queue id (`braid.core.rules.enforcement`):

    qdisc htb b7a1: (default b7a1:2)
      class b7a1:1     rate = ceil = the port's line rate
        class b7a1:2       best effort: rate max(line - sum of guarantees, line/100),
                           ceil line, prio 0
        class b7a1:1XXX    one per queue (XXX = VLAN in hex): rate min_rate,
                           ceil max_rate, prio 1, so a soft queue's excess
                           borrows only after best effort has been served
      filter pref 0x1XXX   u32: TPID 0x8100 and VID XXX -> class b7a1:1XXX
      each leaf class queues in a bfifo (`queue_seconds` at its ceil)

How deep a leaf queue may be depends on the switch. On Open vSwitch's
userspace datapath every queued frame stays charged to the one socket OVS
sends all frames through (`braid.adapters.southbound.switchd_buffer`), so
with the host's default 208 KiB buffer a best-effort flood filling a long
queue would starve every other queue: the queues are then short (5 ms).
With room for them (`braid emulate` raises the buffer to 16 MiB before OVS
makes its socket) they hold 50 ms at their ceil: a TCP flow through a
queue shaped to its rate needs about a round trip of it to keep the rate
(at 50 ms round trip, 5 ms of queue let TCP reach 46 % of a 40 Mbit/s
reservation on this project's test bed, 250 KB let it reach 98 %). Classes
get a burst of a few frames, so a class the host serves late catches up.

The offsets are relative to the network header, which for a frame OVS sends
tagged lies after the tag: the TPID is at -6, the TCI at -4. Changes are
made in place (`tc class replace`, filters added or deleted alone), never by
deleting the qdisc while traffic flows, so changing one queue does not
disturb the others. When a port's last queue goes, braid's qdisc goes and the
port falls back to its default; while the port's OVS `qos` is empty, OVS
leaves a qdisc set by tc alone.

tc keeps rates in bytes/s and shows them rounded (`33333Kbit`), so what a
port holds is read back as `held(queue)`: the queue with its rates as tc
shows them.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Final, Protocol

from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.switchd_buffer import switchd_send_room
from braid.core.rules.enforcement import Queue
from braid.core.rules.model import RuleSet
from braid.core.rules.tables import difference

__all__ = [
    "BEST_EFFORT_CLASS",
    "BRAID_QDISC",
    "TcQueues",
    "TcRunner",
    "class_of",
    "held",
    "held_difference",
    "shown_rate",
    "tc_runner",
]

BRAID_QDISC: Final = "b7a1:"
"""The handle of braid's root qdisc: qdiscs with another handle are not braid's."""
ROOT_CLASS: Final = "b7a1:1"
BEST_EFFORT_CLASS: Final = "b7a1:2"
_QUEUE_BASE: Final = 0x1000  # queue classes' minor numbers and filter prefs: base + VLAN
_UNITS: Final = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_CLASS_RE: Final = re.compile(
    r"^class htb (b7a1:[0-9a-f]+) (?:root|parent b7a1:[0-9a-f]+)(?: leaf \S+)?"
    r"(?: prio (\d+))?(?: quantum \d+)? rate (\d+)([KMGT]?)bit ceil (\d+)([KMGT]?)bit"
)
_TPID_MATCH: Final = "match 00008100/0000ffff at -8"  # as tc prints `u16 0x8100 at -6`
_FILTER_RE: Final = re.compile(r"\bpref (\d+) u32\b.*\bflowid (b7a1:[0-9a-f]+)")
_LEAF_RE: Final = re.compile(r"^qdisc bfifo [0-9a-f]+: parent (b7a1:[0-9a-f]+) limit (\d+)([KM]?)b")
_SIZE_UNITS: Final = {"": 1, "K": 1024, "M": 1024 * 1024}
QUEUE_SECONDS: Final = 0.005
"""A leaf class's queue, in seconds at its ceil (at least `MIN_QUEUE_BYTES`), when the
switch's send buffer is the host default."""
DEEP_QUEUE_SECONDS: Final = 0.05
"""A leaf class's queue where the switch has room (`DEEP_ROOM_BYTES`): a round trip."""
DEEP_ROOM_BYTES: Final = 8 * 1024 * 1024
MIN_QUEUE_BYTES: Final = 2 * 9018  # two jumbo frames: a queue must hold a frame or two
BURST_SECONDS: Final = 0.002  # of a class's rate (at least MIN_QUEUE_BYTES) it may send at once


def queue_seconds_for(room: int | None) -> float:
    """How deep leaf queues are on a switch whose send buffer holds `room` bytes."""
    return DEEP_QUEUE_SECONDS if room is not None and room >= DEEP_ROOM_BYTES else QUEUE_SECONDS


class TcRunner(Protocol):
    """Runs `tc` with these arguments; returns stdout or raises `SouthboundError`."""

    def __call__(self, args: Sequence[str]) -> str: ...


def tc_runner(timeout: float = 20.0, netns: str | None = None) -> TcRunner:
    """A runner calling the real `tc`; with `netns`, in that network namespace (`tc -n`)."""
    prefix = ["tc"] if netns is None else ["tc", "-n", netns]

    def run(args: Sequence[str]) -> str:
        command = [*prefix, *args]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SouthboundError("", f"{' '.join(command[:5])}: {exc}") from exc
        if done.returncode != 0:
            message = done.stderr.strip() or f"exit status {done.returncode}"
            raise SouthboundError("", f"{' '.join(command)}: {message}")
        return done.stdout

    return run


def class_of(queue_id: int) -> str:
    """The HTB class of the queue whose frames carry VLAN `queue_id`."""
    return f"b7a1:{_QUEUE_BASE + queue_id:x}"


def _burst(rate: int) -> int:
    return max(int(rate / 8 * BURST_SECONDS), MIN_QUEUE_BYTES)


def _whole_bytes(rate_bps: int) -> int:
    """A rate in bit/s rounded up to whole bytes/s, which tc keeps (never 0, never under)."""
    return max(8, -(-rate_bps // 8) * 8)


def shown_rate(rate_bps: int) -> int:
    """The rate tc shows for a rate braid writes: whole bytes/s, then at most 3 digits
    dropped per unit step (iproute2's `print_rate`), read back as bit/s."""
    rate = _whole_bytes(rate_bps)
    scale = 1
    for _ in range(len(_UNITS) - 1):
        if rate < 1000 or (rate % 1000 and rate < 1000 * 1000):
            break
        rate //= 1000
        scale *= 1000
    return rate * scale


def held(queue: Queue) -> Queue:
    """`queue` as a port holds it: its rates as tc shows them."""
    return replace(
        queue,
        min_rate=shown_rate(queue.min_rate),
        max_rate=shown_rate(queue.max_rate),
        line_rate=shown_rate(queue.line_rate),
    )


def held_difference(actual: RuleSet, desired: RuleSet) -> tuple[RuleSet, RuleSet]:
    """`tables.difference` for a switch whose queues are read back from tc: queues are
    compared as tc holds them, and those to write keep the rates asked for."""
    as_held = replace(desired, queues=tuple(held(q) for q in desired.queues))
    add, delete = difference(actual, as_held)
    asked = {q.key: q for q in desired.queues}
    return replace(add, queues=tuple(asked[q.key] for q in add.queues)), delete


@dataclass(frozen=True, slots=True)
class _PortTree:
    """What braid's HTB tree on one netdev holds, as read back."""

    qdisc: bool
    line_rate: int | None
    classes: dict[str, tuple[int, int, int]]  # class -> (prio, rate, ceil)
    filters: dict[int, str]  # pref -> class of a filter matching its VLAN as braid writes it
    leaves: dict[str, int]  # class -> its bfifo's limit in bytes


class TcQueues:
    """Writes and reads braid's queues on switch port netdevs with `tc`."""

    def __init__(
        self,
        runner: TcRunner | None = None,
        queue_seconds: float | None = None,
        *,
        netns: str | None = None,
    ) -> None:
        """`queue_seconds` None: as deep as the local Open vSwitch's send buffer allows,
        looked at when the first queue is written. `netns`: the network namespace the
        ports (and that Open vSwitch) are in; tc runs there unless `runner` is given."""
        self.run = runner or tc_runner(netns=netns)
        self._queue_seconds = queue_seconds
        self._netns = netns

    @property
    def queue_seconds(self) -> float:
        if self._queue_seconds is None:
            self._queue_seconds = queue_seconds_for(switchd_send_room(self._netns))
        return self._queue_seconds

    def apply(self, netdev: str, queues: Iterable[Queue]) -> None:
        """Add or change `queues` (all of one port) in place; other queues stay."""
        wanted = list(queues)
        if not wanted:
            return
        tree = self._read(netdev)
        line = wanted[-1].line_rate
        if not tree.qdisc:
            root = ["qdisc", "replace", "dev", netdev, "root", "handle", BRAID_QDISC]
            self.run([*root, "htb", "default", "2"])
        if not tree.qdisc or tree.line_rate != shown_rate(line):
            self._class(netdev, BRAID_QDISC, ROOT_CLASS, line, line)
        for queue in wanted:
            name = class_of(queue.queue_id)
            self._class(netdev, ROOT_CLASS, name, queue.min_rate, queue.max_rate, prio=1)
            self._leaf(netdev, tree, name, queue.max_rate)
            if tree.filters.get(_pref(queue.queue_id)) != class_of(queue.queue_id):
                self._filter(netdev, queue.queue_id)
        kept = {q: r[1] for q, r in tree.classes.items() if _queue_id(q) is not None}
        kept.update({class_of(q.queue_id): q.min_rate for q in wanted})
        self._best_effort(netdev, line, sum(kept.values()))
        self._leaf(netdev, tree, BEST_EFFORT_CLASS, line)

    def remove(self, netdev: str, queues: Iterable[Queue]) -> None:
        """Delete `queues` (filter, then class); with none left, braid's qdisc too."""
        tree = self._read(netdev)
        if not tree.qdisc:
            return
        gone = {class_of(q.queue_id) for q in queues}
        for name in sorted(gone):
            queue_id = _queue_id(name)
            assert queue_id is not None
            if _pref(queue_id) in tree.filters:
                where = ["dev", netdev, "parent", BRAID_QDISC, "protocol", "all"]
                self.run(["filter", "del", *where, "pref", str(_pref(queue_id))])
        if gone & set(tree.classes):
            # Deleting a class drops what it holds: frames a make-before-break left on
            # the old path get a queue's depth of time to leave first.
            time.sleep(self.queue_seconds)
        for name in sorted(gone):
            if name in tree.classes:
                self.run(["class", "del", "dev", netdev, "classid", name])
        left = {
            q: r[1] for q, r in tree.classes.items() if _queue_id(q) is not None and q not in gone
        }
        if not left:
            self.run(["qdisc", "del", "dev", netdev, "root", "handle", BRAID_QDISC])
        elif tree.line_rate is not None:
            self._best_effort(netdev, tree.line_rate, sum(left.values()))

    def dump(self, netdev: str, port: int) -> tuple[Queue, ...]:
        """braid's queues on `netdev` (OpenFlow port `port`): classes with their filter."""
        tree = self._read(netdev)
        if not tree.qdisc or tree.line_rate is None:
            return ()
        found = []
        for name, (_, rate, ceil) in sorted(tree.classes.items()):
            queue_id = _queue_id(name)
            if queue_id is not None and tree.filters.get(_pref(queue_id)) == name:
                found.append(Queue(port, queue_id, rate, ceil, tree.line_rate))
        return tuple(found)

    # --- helpers ---

    def _class(
        self, netdev: str, parent: str, name: str, rate: int, ceil: int, prio: int | None = None
    ) -> None:
        args = ["class", "replace", "dev", netdev, "parent", parent, "classid", name, "htb"]
        args += ["rate", f"{_whole_bytes(rate)}bit", "ceil", f"{_whole_bytes(ceil)}bit"]
        args += ["burst", f"{_burst(rate)}b", "cburst", f"{_burst(ceil)}b"]
        self.run(args + ([] if prio is None else ["prio", str(prio)]))

    def _leaf(self, netdev: str, tree: _PortTree, name: str, ceil: int) -> None:
        """Give class `name` its short queue, unless it has it (replacing drops its frames)."""
        limit = max(int(ceil / 8 * self.queue_seconds), MIN_QUEUE_BYTES)
        if tree.leaves.get(name) != limit:
            handle = f"{name.partition(':')[2]}:"
            where = ["dev", netdev, "parent", name, "handle", handle]
            self.run(["qdisc", "replace", *where, "bfifo", "limit", str(limit)])

    def _best_effort(self, netdev: str, line: int, guaranteed: int) -> None:
        # Best effort keeps at least 1% of the line, however much is guaranteed.
        rate = max(line - guaranteed, line // 100)
        self._class(netdev, ROOT_CLASS, BEST_EFFORT_CLASS, rate, line, prio=0)

    def _filter(self, netdev: str, queue_id: int) -> None:
        where = ["dev", netdev, "parent", BRAID_QDISC, "protocol", "all"]
        tpid = ["match", "u16", "0x8100", "0xffff", "at", "-6"]
        vid = ["match", "u16", f"{queue_id:#x}", "0x0fff", "at", "-4"]
        pref = ["pref", str(_pref(queue_id)), "u32"]
        self.run(["filter", "add", *where, *pref, *tpid, *vid, "classid", class_of(queue_id)])

    def _read(self, netdev: str) -> _PortTree:
        qdiscs = self.run(["qdisc", "show", "dev", netdev]).splitlines()
        if not any(ln.startswith(f"qdisc htb {BRAID_QDISC} root") for ln in qdiscs):
            return _PortTree(False, None, {}, {}, {})
        classes = _parse_classes(self.run(["class", "show", "dev", netdev]))
        filters = _parse_filters(self.run(["filter", "show", "dev", netdev, "parent", BRAID_QDISC]))
        root = classes.pop(ROOT_CLASS, None)
        leaves = {}
        for line in qdiscs:
            found = _LEAF_RE.match(line.strip())
            if found is not None:
                leaves[found.group(1)] = int(found.group(2)) * _SIZE_UNITS[found.group(3)]
        return _PortTree(True, None if root is None else root[1], classes, filters, leaves)


def _pref(queue_id: int) -> int:
    return _QUEUE_BASE + queue_id


def _queue_id(name: str) -> int | None:
    minor = int(name.partition(":")[2], 16)
    return minor - _QUEUE_BASE if _QUEUE_BASE < minor < _QUEUE_BASE + 4095 else None


def _parse_classes(text: str) -> dict[str, tuple[int, int, int]]:
    """braid's HTB classes in `tc class show` output: class -> (prio, rate, ceil) in bit/s."""
    classes = {}
    for line in text.splitlines():
        found = _CLASS_RE.match(line.strip())
        if found is not None:
            name, prio, rate, rate_unit, ceil, ceil_unit = found.groups()
            classes[name] = (
                int(prio or 0),
                int(rate) * _UNITS[rate_unit],
                int(ceil) * _UNITS[ceil_unit],
            )
    return classes


def _parse_filters(text: str) -> dict[int, str]:
    """pref -> class of each u32 filter that matches a VLAN the way braid writes it."""
    filters: dict[int, str] = {}
    current: tuple[int, str] | None = None
    matches: list[str] = []
    for line in [*text.splitlines(), "filter end"]:
        line = line.strip()
        if line.startswith("match "):
            matches.append(line)
            continue
        if current is not None:
            pref, name = current
            queue_id = _queue_id(name)
            expected = {_TPID_MATCH, f"match {queue_id or 0:04x}0000/0fff0000 at -4"}
            if queue_id is not None and pref == _pref(queue_id) and set(matches) == expected:
                filters[pref] = name
        found = _FILTER_RE.search(line)
        current = None if found is None else (int(found.group(1)), found.group(2))
        matches = []
    return filters
