"""One domain's holds: Prep, Commit, Abort, expiry, restart, VLANs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.model.network import Network
from braid.core.model.topology import topology_from_dict
from braid.core.negotiation.domains import VlanRange
from braid.core.negotiation.holds import (
    BadTokenError,
    HoldBook,
    HoldState,
    PrepRefused,
    SegmentAsk,
    StateConflictError,
    UnknownTransactionError,
)

G = 10**9
TOKEN = "t" * 20


def book() -> HoldBook:
    topology = topology_from_dict(
        {
            "nodes": [{"id": n} for n in ("in", "x", "out")],
            "links": [
                {"id": "l1", "a": "in", "b": "x", "capacity": "10G"},
                {"id": "l2", "a": "x", "b": "out", "capacity": "10G"},
            ],
        }
    )
    return HoldBook(Network(topology), {"l1": VlanRange(100, 101)})


def seg(gbps: int, path: int = 0) -> SegmentAsk:
    return SegmentAsk("in", "out", gbps * G, path)


def prep(b: HoldBook, tx: str, gbps: int, expires: int = 100) -> None:
    b.prepare(tx, TOKEN, [seg(gbps)], 0, 50, expires, True)


def test_a_hold_takes_capacity_that_offers_then_lack() -> None:
    b = book()
    assert b.offer("in", "out", 0, 50, True) == 10 * G
    prep(b, "t1", 6)
    assert b.offer("in", "out", 0, 50, True) == 4 * G
    with pytest.raises(PrepRefused):
        prep(b, "t2", 5)
    assert "t2" not in b.holds and b.offer("in", "out", 0, 50, True) == 4 * G


def test_commit_and_abort_are_idempotent() -> None:
    b = book()
    prep(b, "t1", 6)
    assert b.commit("t1", TOKEN)[1] is True
    assert b.commit("t1", TOKEN) == (b.holds["t1"], False)
    with pytest.raises(StateConflictError):
        b.abort("t1", TOKEN)
    prep(b, "t2", 2)
    assert b.abort("t2", TOKEN)[1] is True
    assert b.abort("t2", TOKEN)[1] is False
    assert b.offer("in", "out", 0, 50, True) == 4 * G


def test_a_wrong_token_or_unknown_transaction_changes_nothing() -> None:
    b = book()
    prep(b, "t1", 6)
    with pytest.raises(BadTokenError):
        b.commit("t1", "x" * 20)
    with pytest.raises(BadTokenError):
        b.abort("t1", "x" * 20)
    with pytest.raises(UnknownTransactionError):
        b.commit("nope", TOKEN)
    assert b.holds["t1"].state is HoldState.HELD


def test_an_abort_that_overtakes_its_prep_refuses_the_prep() -> None:
    b = book()
    b.abort("t1", TOKEN)
    with pytest.raises(StateConflictError):
        prep(b, "t1", 1)
    assert b.offer("in", "out", 0, 50, True) == 10 * G


def test_release_frees_a_booking_once_and_refuses_a_late_prep() -> None:
    b = book()
    prep(b, "t1", 6, expires=10)
    b.commit("t1", TOKEN)
    hold, changed = b.release("t1", TOKEN)
    assert (hold.state, changed) == (HoldState.RELEASED, True)
    assert b.release("t1", TOKEN)[1] is False
    assert b.offer("in", "out", 0, 50, True) == 10 * G
    with pytest.raises(StateConflictError):
        b.commit("t1", TOKEN)
    assert b.abort("t1", TOKEN)[1] is False  # freed already: nothing to do
    b.release("t2", TOKEN)  # before its Prep: a tombstone
    with pytest.raises(StateConflictError):
        prep(b, "t2", 1)
    with pytest.raises(UnknownTransactionError):
        b.commit("t2", TOKEN)


def test_vlans_are_picked_per_path_and_run_out() -> None:
    b = book()
    b.prepare("t1", TOKEN, [seg(1, 0)], 0, 50, 100, True)
    b.prepare("t2", TOKEN, [seg(1, 0)], 0, 50, 100, True)
    assert [v.vlan for v in b.holds["t1"].vlans + b.holds["t2"].vlans] == [100, 101]
    with pytest.raises(PrepRefused, match="no free VLAN"):
        prep(b, "t3", 1)
    assert b.offer("in", "out", 0, 50, True) == 8 * G
    b.prepare("t4", TOKEN, [seg(1, 0)], 50, 60, 100, True)  # another time: VLANs free again


def test_restore_rebuilds_the_same_bookings() -> None:
    b = book()
    prep(b, "t1", 3)
    prep(b, "t2", 4)
    b.commit("t1", TOKEN)
    b.abort("t2", TOKEN)
    prep(b, "t3", 2)
    again = book()
    again.restore(b.holds.values())
    assert again.offer("in", "out", 0, 50, True) == b.offer("in", "out", 0, 50, True) == 5 * G
    assert {t: h.state for t, h in again.holds.items()} == {t: h.state for t, h in b.holds.items()}


events = st.lists(
    st.tuples(
        st.sampled_from(["prep", "commit", "abort", "release"]),
        st.integers(0, 5),
        st.integers(1, 6),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(events)
def test_capacity_always_equals_what_live_holds_take(script: list[tuple[str, int, int]]) -> None:
    b = book()
    for action, n, gbps in script:
        tx = f"t{n}"
        try:
            if action == "prep":
                prep(b, tx, gbps)
            elif action == "commit":
                b.commit(tx, TOKEN)
            elif action == "abort":
                b.abort(tx, TOKEN)
            else:
                b.release(tx, TOKEN)
        except (PrepRefused, StateConflictError, UnknownTransactionError):
            pass
        live = sum(
            s.bandwidth
            for h in b.holds.values()
            if h.state in (HoldState.HELD, HoldState.COMMITTED)
            for s in h.segments
        )
        assert live <= 10 * G
        assert b.offer("in", "out", 0, 50, True) == 10 * G - live


windowed = st.lists(
    st.tuples(
        st.sampled_from(["prep", "prep", "abort", "release"]),
        st.integers(0, 7),
        st.integers(0, 40),
        st.integers(1, 20),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(windowed)
def test_a_vlan_is_refused_only_when_every_one_is_in_use_then(
    script: list[tuple[str, int, int, int]],
) -> None:
    """Live holds never share a VLAN at the same time, and a Prep is refused for want of
    a VLAN only when, counted by brute force, both are in use somewhere in its window."""
    b = book()
    for action, n, start, length in script:
        tx, end = f"t{n}", start + length
        live = [h for h in b.holds.values() if h.state in (HoldState.HELD, HoldState.COMMITTED)]
        taken = {v.vlan for h in live if h.start < end and start < h.end for v in h.vlans}
        try:
            if action == "prep":
                b.prepare(tx, TOKEN, [seg(1)], start, end, 100, True)
            elif action == "abort":
                b.abort(tx, TOKEN)
            else:
                b.release(tx, TOKEN)
        except PrepRefused as refused:
            assert "no free VLAN" not in str(refused) or taken == {100, 101}
        except (StateConflictError, UnknownTransactionError):
            pass
        live = [h for h in b.holds.values() if h.state in (HoldState.HELD, HoldState.COMMITTED)]
        for i, h in enumerate(live):
            for other in live[i + 1 :]:
                if h.start < other.end and other.start < h.end:
                    assert not {v.vlan for v in h.vlans} & {v.vlan for v in other.vlans}


def parallel_book() -> HoldBook:
    """Two parallel border links (p1, p2) from the far end `in` to `x`, one VLAN each."""
    topology = topology_from_dict(
        {
            "nodes": [{"id": n} for n in ("in", "x", "out")],
            "links": [
                {"id": "p1", "a": "in", "b": "x", "capacity": "10G"},
                {"id": "p2", "a": "in", "b": "x", "capacity": "10G"},
                {"id": "l2", "a": "x", "b": "out", "capacity": "40G"},
            ],
        }
    )
    return HoldBook(Network(topology), {"p1": VlanRange(100, 100), "p2": VlanRange(200, 201)})


def test_a_link_out_of_vlans_is_passed_by_on_a_parallel_link() -> None:
    b = parallel_book()
    for tx in ("t1", "t2", "t3"):
        b.prepare(tx, TOKEN, [seg(1)], 0, 50, 100, True)
    picks = sorted((v.link, v.vlan) for tx in ("t1", "t2", "t3") for v in b.holds[tx].vlans)
    assert picks == [("p1", 100), ("p2", 200), ("p2", 201)]
    # Capacity is left on both links, VLANs on neither: the refusal names both ranges.
    with pytest.raises(PrepRefused) as refused:
        b.prepare("t4", TOKEN, [seg(1)], 0, 50, 100, True)
    assert str(refused.value) == "no free VLAN on link p1 in 100-100, p2 in 200-201"
    assert "t4" not in b.holds and b.offer("in", "out", 0, 50, True) == 17 * G


def test_two_segments_of_one_prep_take_two_vlans_across_parallel_links() -> None:
    b = parallel_book()
    b.prepare("t1", TOKEN, [seg(1, 0), seg(1, 1), seg(1, 2)], 0, 50, 100, True)
    vlans = b.holds["t1"].vlans
    assert sorted((v.link, v.vlan) for v in vlans) == [("p1", 100), ("p2", 200), ("p2", 201)]
    assert sorted(v.path_index for v in vlans) == [0, 1, 2]


def test_a_peers_vlan_ranges_bound_its_picks() -> None:
    b = parallel_book()
    share = {"p1": ((100, 100),), "p2": ((201, 201),)}
    b.prepare("t1", TOKEN, [seg(1)], 0, 50, 100, True, vlan_ranges=share)
    b.prepare("t2", TOKEN, [seg(1)], 0, 50, 100, True, vlan_ranges=share)
    assert sorted(v.vlan for tx in ("t1", "t2") for v in b.holds[tx].vlans) == [100, 201]
    with pytest.raises(PrepRefused, match="p1 in 100-100, p2 in 201-201"):
        b.prepare("t3", TOKEN, [seg(1)], 0, 50, 100, True, vlan_ranges=share)
    b.prepare("t4", TOKEN, [seg(1)], 0, 50, 100, True)  # another peer: the whole range
    assert [(v.link, v.vlan) for v in b.holds["t4"].vlans] == [("p2", 200)]


def test_capacity_not_vlans_is_named_when_capacity_is_short() -> None:
    b = parallel_book()
    with pytest.raises(PrepRefused) as refused:
        b.prepare("t1", TOKEN, [seg(21)], 0, 50, 100, True)
    assert "VLAN" not in str(refused.value)


shares = st.lists(
    st.tuples(
        st.integers(0, 50),  # start
        st.integers(1, 30),  # length
        st.sampled_from([None, {"p1": ((100, 100),)}, {"p2": ((201, 201),)}, {"p1": ()}]),
    ),
    max_size=25,
)


@settings(max_examples=100, deadline=None)
@given(shares)
def test_picks_stay_in_the_peers_ranges_and_a_refusal_means_none_was_free(
    script: list[tuple[int, int, dict[str, tuple[tuple[int, int], ...]] | None]],
) -> None:
    """Across parallel links: every VLAN picked lies in the ranges the Prep allowed, live
    holds never share a (link, VLAN) at once, and a Prep is refused for want of VLANs
    only when, counted by brute force, no allowed VLAN of either link was free."""
    b = parallel_book()
    whole = {"p1": [100], "p2": [200, 201]}
    for n, (start, length, share) in enumerate(script):
        end = start + length
        allowed = {
            link: [v for v in vlans if share is None or link not in share
                   or any(lo <= v <= hi for lo, hi in share[link])]
            for link, vlans in whole.items()
        }  # fmt: skip
        live = [h for h in b.holds.values() if h.state is HoldState.HELD]
        busy = {(v.link, v.vlan) for h in live if h.start < end and start < h.end for v in h.vlans}
        free = [
            (link, v) for link, vlans in allowed.items() for v in vlans if (link, v) not in busy
        ]
        try:
            hold = b.prepare(f"t{n}", TOKEN, [seg(1)], start, end, 100, True, vlan_ranges=share)
        except PrepRefused as refused:
            assert str(refused).startswith("no free VLAN") and free == []
            continue
        (pick,) = hold.vlans
        assert (pick.link, pick.vlan) in free
