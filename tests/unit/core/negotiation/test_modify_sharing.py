"""A modify's new version placed as if the old were gone, booking only its excess."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.network import Network
from braid.core.model.topology import topology_from_dict
from braid.core.negotiation.holds import (
    BadTokenError,
    Hold,
    HoldBook,
    HoldState,
    PrepRefused,
    SegmentAsk,
    StateConflictError,
    UnknownTransactionError,
)

G = 10**9
TOKEN = "t" * 20
NETWORK = {
    "nodes": [{"id": n} for n in ("in", "x", "y", "out")],
    "links": [
        {"id": "l1", "a": "in", "b": "x", "capacity": "10G"},
        {"id": "l2", "a": "x", "b": "out", "capacity": "10G"},
        {"id": "l3", "a": "in", "b": "y", "capacity": "10G", "latency_ms": 5},
        {"id": "l4", "a": "y", "b": "out", "capacity": "10G", "latency_ms": 5},
    ],
}


def book() -> HoldBook:
    return HoldBook(Network(topology_from_dict(NETWORK)), {})


def prep(
    b: HoldBook, tx: str, gbps: int, window: tuple[int, int] = (0, 50), replaces: str = ""
) -> Hold:
    segment = SegmentAsk("in", "out", gbps * G, 0)
    old = (replaces, TOKEN) if replaces else None
    return b.prepare(tx, TOKEN, [segment], *window, 1000, True, replaces=old)


def booked(b: HoldBook) -> Counter[tuple[str, int, int]]:
    """Every link direction's load at every booking edge (what the timelines hold)."""
    out: Counter[tuple[str, int, int]] = Counter()
    for (link, forward), timeline in b.network.timelines().items():
        for t in sorted({x for bk in b.network.bookings.values() for x in (bk.start, bk.end)}):
            out[(f"{link}:{forward}", t, timeline.free(t, t + 1))] += 1
    return out


def test_a_modify_that_grows_on_a_full_path_fits_beside_the_old_version() -> None:
    b = book()
    prep(b, "old", 8)
    b.commit("old", TOKEN)
    assert b.offer("in", "out", 0, 50, True) == 12 * G  # 2G beside the old, 10G on l3-l4
    assert b.offer("in", "out", 0, 50, True, replaces=("old", TOKEN)) == 20 * G
    with pytest.raises(PrepRefused):
        prep(b, "alone", 14)  # as a reservation of its own it does not fit
    new = prep(b, "new", 14, replaces="old")
    assert new.sharing and new.replaces == "old"
    # Booked per link: the larger of the two versions, never their sum (8G + 14G > 20G).
    assert 0 < b.offer("in", "out", 0, 50, True) <= 6 * G
    room = b.offer("in", "out", 0, 50, True)
    b.commit("new", TOKEN)  # both versions committed (and their rules) until the release
    assert b.holds["old"].state is HoldState.COMMITTED and b.holds["new"].sharing
    assert b.offer("in", "out", 0, 50, True) == room
    b.release("old", TOKEN)
    assert not b.holds["new"].sharing
    assert set(b.network.bookings) == {"new#0"}
    assert b.offer("in", "out", 0, 50, True) == 6 * G


def test_an_aborted_modify_leaves_the_old_version_as_it_was() -> None:
    b = book()
    prep(b, "old", 8)
    b.commit("old", TOKEN)
    before = booked(b)
    prep(b, "new", 9, replaces="old")
    b.abort("new", TOKEN)
    assert b.holds["old"].state is HoldState.COMMITTED
    assert booked(b) == before and set(b.network.bookings) == {"old#0"}


def test_a_modify_that_does_not_fit_even_so_is_refused_and_changes_nothing() -> None:
    b = book()
    prep(b, "old", 8)
    b.commit("old", TOKEN)
    prep(b, "other", 5)
    before = booked(b)
    with pytest.raises(PrepRefused):
        prep(b, "new", 16, replaces="old")  # 20G less the other's 5G: 15G
    assert "new" not in b.holds and booked(b) == before


def test_releasing_the_old_version_under_a_held_modify_books_the_modify_in_full() -> None:
    b = book()
    prep(b, "old", 8)
    b.commit("old", TOKEN)
    prep(b, "new", 12, replaces="old")
    b.release("old", TOKEN)  # a cancel overtook the modify
    assert not b.holds["new"].sharing
    assert set(b.network.bookings) == {"new#0"}
    b.commit("new", TOKEN)
    assert set(b.network.bookings) == {"new#0"}


def test_a_second_modify_of_the_same_version_is_admitted_on_its_own() -> None:
    """Two modifies sharing one old version would each count it free: the second one
    (and one replacing a version still sharing) books all it needs."""
    b = book()
    prep(b, "old", 8)
    b.commit("old", TOKEN)
    assert prep(b, "first", 9, replaces="old").sharing
    second = prep(b, "second", 1, replaces="old")
    assert not second.sharing and "second#0" in b.network.bookings
    b.commit("first", TOKEN)
    third = prep(b, "third", 1, replaces="first")  # "first" still shares "old"
    assert not third.sharing
    b.release("old", TOKEN)
    assert set(b.network.bookings) == {"first#0", "second#0", "third#0"}


def test_a_wrong_token_for_the_old_version_is_refused() -> None:
    b = book()
    prep(b, "old", 2)
    b.commit("old", TOKEN)
    with pytest.raises(BadTokenError):
        b.prepare("new", TOKEN, [SegmentAsk("in", "out", G, 0)], 0, 50, 1000, True,
                  replaces=("old", "x" * 20))  # fmt: skip
    assert "new" not in b.holds


def test_a_window_moved_later_books_all_of_its_load_where_the_old_one_has_ended() -> None:
    b = book()
    prep(b, "old", 8, (0, 50))
    b.commit("old", TOKEN)
    new = prep(b, "new", 10, (20, 80), replaces="old")
    spans = sorted((bk.start, bk.end) for bk in new.shared)
    assert spans == [(20, 50), (50, 80)]
    l1 = b.network.timeline("l1", True)
    # On l1: the old 8G alone first, then the larger version, then the new 10G alone.
    assert (l1.free(0, 20), l1.free(20, 50), l1.free(50, 80)) == (2 * G, 0, 0)
    b.commit("new", TOKEN)
    b.release("old", TOKEN)
    assert (l1.free(0, 20), l1.free(20, 80)) == (10 * G, 0)


ops = st.lists(
    st.tuples(
        st.sampled_from(["prep", "modify", "commit", "abort", "release", "restart"]),
        st.integers(0, 9),  # which transaction, among those known
        st.integers(1, 20),  # Gbit/s
        st.integers(0, 3),  # window
    ),
    max_size=30,
)
WINDOWS = [(0, 50), (20, 80), (40, 60), (60, 100)]


@settings(max_examples=400, deadline=None)
@given(ops)
def test_the_timelines_always_hold_exactly_what_the_holds_say(
    script: list[tuple[str, int, int, int]],
) -> None:
    """Whatever the order of modifies, commits, aborts, releases and restarts: no link is
    booked above its capacity, and what is booked is each live hold's own placement,
    or a held modify's excess beside the version it replaces."""
    b = book()
    rows: dict[str, Hold] = {}
    for serial, (op, i, gbps, w) in enumerate(script):
        known = sorted(b.holds)
        tx = known[i % len(known)] if known else "none"
        try:
            if op == "prep":
                prep(b, f"n{serial}", gbps, WINDOWS[w])
            elif op == "modify":
                prep(b, f"n{serial}", gbps, WINDOWS[w], replaces=tx)
            elif op == "commit":
                b.commit(tx, TOKEN)
            elif op == "abort":
                b.abort(tx, TOKEN)
            elif op == "release":
                b.release(tx, TOKEN)
            elif op == "restart":  # as the agent's store has them: first row, last state
                again = book()
                again.restore([replace(rows[t], state=h.state) for t, h in b.holds.items()])
                assert booked(again) == booked(b)
                b = again
        except (PrepRefused, StateConflictError, UnknownTransactionError):
            pass  # a no vote, or a conflict (commit after abort...): nothing changes
        rows.update({t: h for t, h in b.holds.items() if t not in rows})
        _check(b)


def _check(b: HoldBook) -> None:
    expected: set[str] = set()
    for hold in b.holds.values():
        if hold.sharing:  # held or committed beside the version it replaces
            assert b.holds[hold.replaces].state is HoldState.COMMITTED
            expected |= {bk.id for bk in hold.shared}
        elif hold.state in (HoldState.HELD, HoldState.COMMITTED):
            expected |= {f"{hold.transaction}#{k}" for k, a in enumerate(hold.allocations) if a}
    assert set(b.network.bookings) == expected
    for timeline in b.network.timelines().values():
        assert timeline.free(-1, 10**6) >= 0


def volume_steps(b: HoldBook, rates: list[int], edges: list[int]) -> list[str]:
    """A volume's committed steps: rate i over [edges[i], edges[i + 1])."""
    names = []
    for i, gbps in enumerate(rates):
        name = f"old.s{i}"
        prep(b, name, gbps, (edges[i], edges[i + 1]))
        b.commit(name, TOKEN)
        names.append(name)
    return names


def test_a_volumes_new_steps_count_every_old_step_as_free() -> None:
    b = book()
    olds = volume_steps(b, [20, 10, 20], [0, 20, 40, 60])  # both paths full, then l1 only
    everyone = [(name, TOKEN) for name in olds]
    assert b.offer("in", "out", 0, 60, True) == 0
    assert b.offer("in", "out", 0, 60, True, everyone[0], everyone[1:]) == 20 * G
    assert b.offer_steps("in", "out", 0, 60, True, everyone[0], everyone[1:]) == [(0, 60, 20 * G)]
    segment = [SegmentAsk("in", "out", 20 * G, 0)]
    first = b.prepare(
        "new.s0",
        TOKEN,
        segment,
        0,
        30,
        1000,
        True,
        replaces=everyone[0],
        also_replaces=everyone[1:],
    )
    # Apart in time from the first, the second new step may count the same old step free.
    second = b.prepare(
        "new.s1",
        TOKEN,
        segment,
        30,
        60,
        1000,
        True,
        replaces=everyone[0],
        also_replaces=everyone[1:],
    )
    assert first.replaced == ("old.s0", "old.s1") and second.replaced == ("old.s1", "old.s2")
    # The excess: 10G over [20, 40) only, where the old step carried 10G.
    assert sorted((bk.start, bk.end) for h in (first, second) for bk in h.shared) == [
        (20, 30),
        (30, 40),
    ]
    with pytest.raises(PrepRefused):  # overlapping a sharer: the old steps are not free twice
        b.prepare(
            "other",
            TOKEN,
            segment,
            10,
            50,
            1000,
            True,
            replaces=everyone[0],
            also_replaces=everyone[1:],
        )
    for name in ("new.s0", "new.s1"):
        b.commit(name, TOKEN)
    b.release("old.s1", TOKEN)  # one old step gone: each new step shares what is left
    assert b.holds["new.s0"].replaced == ("old.s0",) and b.holds["new.s1"].replaced == ("old.s2",)
    for name in ("old.s0", "old.s2"):
        b.release(name, TOKEN)
    assert not any(h.sharing for h in b.holds.values())
    l1 = b.network.timeline("l1", True)
    assert (l1.free(0, 60), b.offer("in", "out", 0, 60, True)) == (0, 0)  # 20G: both paths


def test_a_restart_after_some_old_steps_went_shares_only_the_rest() -> None:
    b = book()
    olds = volume_steps(b, [20, 20], [0, 30, 60])
    everyone = [(name, TOKEN) for name in olds]
    segment = [SegmentAsk("in", "out", 20 * G, 0)]
    b.prepare(
        "new.s0",
        TOKEN,
        segment,
        0,
        60,
        1000,
        True,
        replaces=everyone[0],
        also_replaces=everyone[1:],
    )
    b.commit("new.s0", TOKEN)
    stale = list(b.holds.values())  # the store writes only states when holds change
    b.release("old.s0", TOKEN)
    states = {name: b.holds[name].state for name in b.holds}
    again = book()
    again.restore(replace(h, state=states[h.transaction]) for h in stale)
    assert again.holds["new.s0"].replaced == ("old.s1",)
    assert again.offer("in", "out", 0, 60, True) == b.offer("in", "out", 0, 60, True) == 0
