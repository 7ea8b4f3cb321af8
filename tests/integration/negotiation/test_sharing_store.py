"""A modify that shares the old version's bookings survives restarts from the agent's store."""

from __future__ import annotations

from pathlib import Path

from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.core.model.network import Network
from braid.core.model.topology import topology_from_dict
from braid.core.negotiation.holds import HoldBook, SegmentAsk

G = 10**9
TOKEN = "t" * 20
NETWORK = {
    "nodes": [{"id": n} for n in ("in", "x", "out")],
    "links": [
        {"id": "l1", "a": "in", "b": "x", "capacity": "10G"},
        {"id": "l2", "a": "x", "b": "out", "capacity": "10G"},
    ],
}


def reopened(path: Path) -> HoldBook:
    """A restarted agent's book: every hold as its store has it."""
    book = HoldBook(Network(topology_from_dict(NETWORK)), {})
    store = SqliteHoldStore(path)
    book.restore(store.load())
    store.close()
    return book


def loads(book: HoldBook) -> list[int]:
    line = book.network.timeline("l1", True)
    return [line.free(t, t + 1) for t in (0, 30, 60)]


def test_each_step_of_a_shared_modify_restarts_to_the_same_bookings(tmp_path: Path) -> None:
    path = tmp_path / "holds.db"
    store = SqliteHoldStore(path)
    book = HoldBook(Network(topology_from_dict(NETWORK)), {})
    old = book.prepare("old", TOKEN, [SegmentAsk("in", "out", 8 * G, 0)], 0, 50, 100, True)
    store.write([old], [])
    store.write([], [book.commit("old", TOKEN)[0]])  # as the agent writes: state only
    new = book.prepare(
        "new", TOKEN, [SegmentAsk("in", "out", 9 * G, 0)], 20, 80, 100, True,
        replaces=("old", TOKEN),
    )  # fmt: skip
    store.write([new], [])
    assert new.sharing and loads(book) == [2 * G, G, G]
    assert loads(reopened(path)) == loads(book) and reopened(path).holds["new"].sharing
    store.write([], [book.commit("new", TOKEN)[0]])
    assert loads(reopened(path)) == loads(book) == [2 * G, G, G]
    store.write([], [book.release("old", TOKEN)[0]])  # the new one's row is not rewritten
    assert loads(book) == [10 * G, G, G]
    again = reopened(path)
    assert loads(again) == loads(book) and not again.holds["new"].sharing
    store.close()


def test_a_volume_step_sharing_two_old_steps_restarts_to_the_same_bookings(
    tmp_path: Path,
) -> None:
    path = tmp_path / "holds.db"
    store = SqliteHoldStore(path)
    book = HoldBook(Network(topology_from_dict(NETWORK)), {})
    for name, window in (("old.s0", (0, 40)), ("old.s1", (40, 80))):
        step = book.prepare(name, TOKEN, [SegmentAsk("in", "out", 8 * G, 0)], *window, 100, True)
        store.write([step], [])
        store.write([], [book.commit(name, TOKEN)[0]])
    new = book.prepare(
        "new.s0", TOKEN, [SegmentAsk("in", "out", 9 * G, 0)], 20, 80, 100, True,
        replaces=("old.s0", TOKEN), also_replaces=[("old.s1", TOKEN)],
    )  # fmt: skip
    store.write([new], [])
    assert new.replaced == ("old.s0", "old.s1") and loads(book) == [2 * G, G, G]
    assert loads(reopened(path)) == loads(book)
    assert reopened(path).holds["new.s0"].replaced == ("old.s0", "old.s1")
    store.write([], [book.commit("new.s0", TOKEN)[0]])
    store.write([], [book.release("old.s0", TOKEN)[0]])  # one old step gone
    assert loads(book) == [10 * G, G, G]
    again = reopened(path)
    assert loads(again) == loads(book) and again.holds["new.s0"].replaced == ("old.s1",)
    store.write([], [book.release("old.s1", TOKEN)[0]])
    assert loads(reopened(path)) == loads(book) == [10 * G, G, G]
    store.close()
