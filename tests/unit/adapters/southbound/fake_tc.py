"""An in-memory stand-in for `tc` (HTB qdiscs, classes and u32 filters), for unit tests.

It understands the commands `TcQueues` sends, keeps per-netdev state, and
prints `show` output the way iproute2 6.1 does (rates kept in bytes/s,
printed with its unit rounding), so the parsing is exercised too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from braid.adapters.southbound.driver import SouthboundError


@dataclass
class HtbClass:
    parent: str
    rate_bytes: int
    ceil_bytes: int
    prio: int


@dataclass
class Netdev:
    qdisc: str | None = None  # "htb <handle>" or another root qdisc, None = the default
    classes: dict[str, HtbClass] = field(default_factory=dict)
    filters: dict[int, tuple[list[tuple[int, int, int]], str]] = field(default_factory=dict)
    leaves: dict[str, int] = field(default_factory=dict)  # class -> bfifo limit, bytes


def _print_rate(rate_bytes: int) -> str:
    rate, units = rate_bytes * 8, ["", "K", "M", "G", "T"]
    i = 0
    while i < len(units) - 1 and rate >= 1000 and not (rate % 1000 and rate < 1000**2):
        rate //= 1000
        i += 1
    return f"{rate}{units[i]}bit"


def _bytes(text: str) -> int:
    assert text.endswith("bit"), text
    return int(text[: -len("bit")]) // 8


class FakeTc:
    """`tc` on netdevs named at construction (any other is 'Cannot find device')."""

    def __init__(self, netdevs: Sequence[str]) -> None:
        self.devs = {name: Netdev() for name in netdevs}
        self.calls: list[list[str]] = []

    def __call__(self, args: Sequence[str]) -> str:
        args = list(args)
        self.calls.append(args)
        obj, verb, _, dev_name, *rest = args
        dev = self.devs.get(dev_name)
        if dev is None:
            raise SouthboundError("", f'Cannot find device "{dev_name}"')
        handler = getattr(self, f"_{obj}_{verb}", None)
        if handler is None:
            raise SouthboundError("", f"fake tc cannot do {args}")
        result: str = handler(dev, rest)
        return result

    # --- qdiscs ---

    def _qdisc_show(self, dev: Netdev, rest: list[str]) -> str:
        if dev.qdisc is None:
            return "qdisc noqueue 0: root refcnt 2 \n"
        lines = [f"qdisc {dev.qdisc} root refcnt 3 r2q 10 default 0x2\n"]
        for name, limit in dev.leaves.items():
            size = f"{limit // 1024}Kb" if limit % 1024 == 0 else f"{limit}b"
            lines.append(f"qdisc bfifo {name.partition(':')[2]}: parent {name} limit {size}\n")
        return "".join(lines)

    def _qdisc_replace(self, dev: Netdev, rest: list[str]) -> str:
        if rest[0] == "parent":  # a leaf class's own queue
            if rest[1] not in dev.classes:
                raise SouthboundError("", "Error: Failed to find specified class.")
            assert rest[4:6] == ["bfifo", "limit"], rest
            dev.leaves[rest[1]] = int(rest[6])
            return ""
        assert rest[:3] == ["root", "handle", "b7a1:"] and rest[3] == "htb", rest
        dev.qdisc, dev.classes, dev.filters, dev.leaves = "htb b7a1:", {}, {}, {}
        return ""

    def _qdisc_del(self, dev: Netdev, rest: list[str]) -> str:
        if dev.qdisc is None:
            raise SouthboundError("", "Error: Cannot delete qdisc with handle of zero.")
        dev.qdisc, dev.classes, dev.filters, dev.leaves = None, {}, {}, {}
        return ""

    # --- classes ---

    def _class_replace(self, dev: Netdev, rest: list[str]) -> str:
        words = [w for w in rest if w != "htb"]
        opts = dict(zip(words[::2], words[1::2], strict=True))
        if dev.qdisc != "htb b7a1:":
            raise SouthboundError("", "Error: Failed to find qdisc with specified handle.")
        parent = opts["parent"]
        if parent != "b7a1:" and parent not in dev.classes:
            raise SouthboundError("", "Error: Failed to find specified class.")
        rate, ceil = _bytes(opts["rate"]), _bytes(opts["ceil"])
        prio = int(opts.get("prio", "0"))
        dev.classes[opts["classid"]] = HtbClass(parent, rate, ceil, prio)
        return ""

    def _class_del(self, dev: Netdev, rest: list[str]) -> str:
        name = rest[rest.index("classid") + 1]
        if any(target == name for _, target in dev.filters.values()):
            raise SouthboundError("", "Error: Filter exists in class.")
        if dev.classes.pop(name, None) is None:
            raise SouthboundError("", "Error: Failed to find class.")
        dev.leaves.pop(name, None)
        return ""

    def _class_show(self, dev: Netdev, rest: list[str]) -> str:
        lines = []
        for name, c in dev.classes.items():
            where = "root" if c.parent == "b7a1:" else f"parent {c.parent} prio {c.prio}"
            lines.append(
                f"class htb {name} {where} rate {_print_rate(c.rate_bytes)} "
                f"ceil {_print_rate(c.ceil_bytes)} burst 1600b cburst 1600b \n"
            )
        return "".join(lines)

    # --- u32 filters ---

    def _filter_add(self, dev: Netdev, rest: list[str]) -> str:
        pref = int(rest[rest.index("pref") + 1])
        if pref in dev.filters:
            raise SouthboundError("", "RTNETLINK answers: File exists")
        matches, i = [], rest.index("u32") + 1
        while rest[i] == "match":
            _, size, value, mask, _, offset = rest[i : i + 6]
            assert size == "u16", size
            matches.append((int(value, 0), int(mask, 0), int(offset)))
            i += 6
        assert rest[i] == "classid", rest
        dev.filters[pref] = (matches, rest[i + 1])
        return ""

    def _filter_del(self, dev: Netdev, rest: list[str]) -> str:
        pref = int(rest[rest.index("pref") + 1])
        if dev.filters.pop(pref, None) is None:
            raise SouthboundError("", "Error: Filter with specified priority/protocol not found.")
        return ""

    def _filter_show(self, dev: Netdev, rest: list[str]) -> str:
        lines = []
        for pref, (matches, target) in sorted(dev.filters.items()):
            head = f"filter parent b7a1: protocol all pref {pref} u32 chain 0"
            lines += [f"{head} ", f"{head} fh 800: ht divisor 1 "]
            lines.append(f"{head} fh 800::800 order 2048 key ht 800 bkt 0 *flowid {target} ")
            for value, mask, offset in matches:
                # u32 prints whole aligned words: a u16 sits in the word's high or low half.
                word, shift = offset - offset % 4, 16 if offset % 4 == 0 else 0
                lines.append(f"  match {value << shift:08x}/{mask << shift:08x} at {word}")
        return "".join(f"{ln}\n" for ln in lines)
