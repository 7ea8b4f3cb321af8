"""The nodes joined to one end over hops with room, and the wall of full hops around them.

When no path carries `need` between two nodes, the nodes src reaches over
hops with `need` free are walled in: every hop leaving them lacks room, so
every path crosses that wall; likewise the hops entering the nodes that
reach dst. A refusal asks for such walls several times in one window (the
refused search finds a side, the earliest-start search jumps over its wall,
the max-flow bound sums it), so a window view's memo keeps every side found:
a later ask costs one pass over the side's hops, read from the view's cache.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from braid.core.graph.reach import relevant_between
from braid.core.model.network import WindowView
from braid.core.model.topology import Hop, Topology

Usable = Callable[[Hop], int]
Wall = list[tuple[Hop, int]]


def window_of(usable: Usable) -> WindowView | None:
    """The window view whose `usable` this is, or None for any other function."""
    view = getattr(usable, "__self__", None)
    if isinstance(view, WindowView) and usable == view.usable:
        return view
    return None


def same_both_ways(usable: Usable) -> bool:
    """Whether `usable` offers the same on a hop and on the hop turned round."""
    view = window_of(usable)
    return view is not None and view.symmetric


def remember_side(
    usable: Usable, ends: tuple[str, str], need: int, out: bool, nodes: Collection[str]
) -> None:
    """Keep a whole side in the view's memo: `nodes`, all joined to `ends[0]`, not `ends[1]`.

    Joined means reached from `ends[0]` (`out`), or reaching it (not `out`),
    over hops with `need` free each; nothing is kept for other functions.
    `nodes` is kept as it is: the caller must not change it afterwards.
    """
    view = window_of(usable)
    if view is not None:
        view.memo[("side", *ends, need, out)] = nodes


def known_side(
    usable: Usable, ends: tuple[str, str], need: int, out: bool
) -> Collection[str] | None:
    """A side `remember_side` kept for this window, or None."""
    view = window_of(usable)
    if view is None:
        return None
    found = view.memo.get(("side", *ends, need, out))
    return found if isinstance(found, Collection) else None


def wall_around(
    topology: Topology, ends: tuple[str, str], nodes: Collection[str], usable: Usable, out: bool
) -> Wall:
    """Every hop leaving `nodes` (`out`) or entering them, and what it has free.

    Only hops to (or from) nodes some simple path between the ends may visit.
    """
    relevant = relevant_between(topology, *ends)
    wall: Wall = []
    for node in nodes:
        for hop in topology.hops(node):
            if hop.to not in nodes and hop.to in relevant:
                step = hop if out else Hop(hop.link, node, not hop.forward)
                wall.append((step, usable(step)))
    return wall


def walled_in(
    topology: Topology, ends: tuple[str, str], usable: Usable, need: int, *, out: bool = True
) -> Wall | None:
    """The wall around what `ends[0]` joins over hops with `need` free, or None if `ends[1]` too.

    Joined are the nodes reached from `ends[0]` (`out`) or reaching it
    (not `out`) over hops with `need` free each, among those some simple
    path between the ends may visit; the wall is every hop leaving them (or
    entering them) towards those, each with less than `need` free, and what
    it has free. Every simple path between the ends crosses it. None when
    the other end is joined: then some path has `need` free throughout.
    """
    known = known_side(usable, ends, need, out)
    if known is not None:
        return wall_around(topology, ends, known, usable, out)
    side = _Side(topology, ends, usable, need, out)
    while side.todo:
        if side.grow():
            return None
    remember_side(usable, ends, need, out, side.side)
    return side.wall()


def nearer_wall(
    topology: Topology, ends: tuple[str, str], usable: Usable, need: int
) -> Wall | None:
    """The wall of `walled_in` around src or dst, whichever is found first.

    Both sides grow a node at a time in turn, so the search costs about
    twice the smaller side: a refused request is mostly walled in close
    to one end, and the other side may be most of the network. A side
    known already in this window is taken as it is (the smaller if both).
    """
    src, dst = ends
    known = [
        (side, out)
        for side, out in (
            (known_side(usable, ends, need, True), True),
            (known_side(usable, (dst, src), need, False), False),
        )
        if side is not None
    ]
    if known:
        nodes, out = min(known, key=lambda found: len(found[0]))
        return wall_around(topology, ends, nodes, usable, out)
    sides = (
        _Side(topology, (src, dst), usable, need, True),
        _Side(topology, (dst, src), usable, need, False),
    )
    # A node joined to both ends lies on a path with room throughout.
    sides[0].meets, sides[1].meets = sides[1].side, sides[0].side
    while True:
        for side in sides:
            if not side.todo:
                remember_side(usable, side.ends, need, side.out, side.side)
                return side.wall()
            if side.grow():
                return None


class _Side:
    """The nodes joined to one end so far, and the hops found lacking room."""

    def __init__(
        self, topology: Topology, ends: tuple[str, str], usable: Usable, need: int, out: bool
    ) -> None:
        self.adjacency, self.usable, self.need, self.out = topology.adjacency, usable, need, out
        self.ends = ends
        self.relevant = relevant_between(topology, *ends)
        # Hops into a side are read turned round, unless the window offers
        # the same both ways: then the hop as listed serves.
        self.turn = not out and not same_both_ways(usable)
        self.side = {ends[0]}
        self.meets = {ends[1]}  # nodes whose joining means the other end is joined
        self.todo = [ends[0]]
        # Hops found lacking room, as listed leaving their node (not turned).
        self.crossing: list[tuple[Hop, int, str]] = []

    def grow(self) -> bool:
        """Join the nodes one more node reaches with room; True if that takes in the other end."""
        node = self.todo.pop()
        side, meets, need, usable = self.side, self.meets, self.need, self.usable
        relevant = self.relevant
        for hop in self.adjacency.get(node, ()):
            to = hop.to
            if to in side or to not in relevant:
                continue
            width = usable(Hop(hop.link, node, not hop.forward) if self.turn else hop)
            if width < need:
                self.crossing.append((hop, width, node))
            elif to in meets:
                return True
            else:
                side.add(to)
                self.todo.append(to)
        return False

    def wall(self) -> Wall:
        # A hop to a node joined later is no longer in the wall.
        side, out = self.side, self.out
        return [
            (hop if out else Hop(hop.link, node, not hop.forward), width)
            for hop, width, node in self.crossing
            if hop.to not in side
        ]
