"""VLANs and group ids are assigned at booking, never shared by overlapping reservations."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.app.errors import RejectedError
from braid.app.records import Reservation
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.plan_facts import labels_of
from braid.app.reservations.service import ReservationService
from braid.core.errors import InputError
from braid.core.planning.lifecycle import counts_against_capacity
from tests.unit.app.reservations.rest_shape import rest
from tests.unit.app.reservations.test_service import ALICE, SQUARE, T0, Clock, at

NARROW: dict[str, Any] = {
    **SQUARE,
    "links": [
        {**link, "vlans": "100-101"} if link["id"] == "AB" else link for link in SQUARE["links"]
    ],
}


def _service(topology: dict[str, Any] = NARROW) -> ReservationService:
    service = ReservationService(MemoryRepository(), clock=Clock(), hold_seconds=60)
    service.start(topology)
    return service


def _body(bw: float, start: int = 100, end: int = 200, **extra: Any) -> dict[str, Any]:
    return {"src": "A", "dst": "B", "bandwidth": bw, "start": at(start), "end": at(end), **extra}


def _vlans(view: dict[str, Any]) -> list[int | None]:
    return [v["vlan"] for v in view["vlans"]]


def test_overlapping_bookings_get_different_vlans_and_the_link_range_is_kept() -> None:
    service = _service()
    first = rest(service).reserve(ALICE, _body(1))
    second = rest(service).reserve(ALICE, _body(1, 150, 250))
    assert _vlans(first) == [100] and _vlans(second) == [101]
    later = rest(service).reserve(ALICE, _body(1, 200, 300))  # first has ended by then
    assert _vlans(later) == [100]


def test_no_vlan_left_is_a_refusal_naming_the_link_and_cancel_frees_it() -> None:
    service = _service()
    first = rest(service).reserve(ALICE, _body(1))
    rest(service).reserve(ALICE, _body(1))
    with pytest.raises(RejectedError, match="no VLAN in 100-101 is free"):
        rest(service).reserve(ALICE, _body(1))
    rest(service).cancel(ALICE, first["id"])
    assert _vlans(rest(service).reserve(ALICE, _body(1))) == [100]


def test_a_modification_keeps_its_vlan_while_it_stays_free() -> None:
    service = _service()
    mine = rest(service).reserve(ALICE, _body(1))
    rest(service).reserve(ALICE, _body(1, 200, 300))  # takes 100 from 200 on
    same = rest(service).modify(ALICE, mine["id"], {"bandwidth": 2})
    assert _vlans(same) == [100]
    longer = rest(service).modify(ALICE, mine["id"], {"end": at(250)})
    assert _vlans(longer) == [101]  # 100 is someone else's from 200


def test_a_topology_with_a_bad_vlan_range_is_refused_naming_the_field() -> None:
    bad = {**SQUARE, "links": [{**SQUARE["links"][0], "vlans": "300-200"}, *SQUARE["links"][1:]]}
    with pytest.raises(InputError) as caught:
        _service(bad)
    assert caught.value.field == "links[0].vlans"


def _used(r: Reservation, vlans: tuple[int, ...]) -> set[tuple[str, int]]:
    return {(k, v) for a, v in zip(r.allocations, vlans, strict=True) for k in a.path.links}


def _clashes(booked: list[Reservation], now: int) -> list[tuple[str, str]]:
    live = [r for r in booked if counts_against_capacity(r.state, r.end, now, r.hold_expires_at)]
    found = []
    for a, b in itertools.combinations(live, 2):
        if not (a.start < b.end and b.start < a.end):
            continue
        la, lb = labels_of(a.plan), labels_of(b.plan)
        assert la is not None and lb is not None
        used_a = {
            (k, v) for al, v in zip(a.allocations, la.vlans, strict=True) for k in al.path.links
        }
        used_b = {
            (k, v) for al, v in zip(b.allocations, lb.vlans, strict=True) for k in al.path.links
        }
        if used_a & used_b or set(la.group_ids) & set(lb.group_ids):
            found.append((a.id, b.id))
    return found


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["reserve", "cancel", "modify"]),
            st.integers(1, 6),
            st.integers(0, 120),
            st.integers(1, 3),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_random_bookings_never_share_a_label(steps: list[tuple[str, int, int, int]]) -> None:
    service = _service(SQUARE)
    ids: list[str] = []
    for action, bw, start, paths in steps:
        try:
            if action == "reserve" or not ids:
                body = {**_body(bw, start, start + 60), "dst": "D", "max_paths": paths}
                ids.append(rest(service).reserve(ALICE, body)["id"])
            elif action == "cancel":
                rest(service).cancel(ALICE, ids.pop(0))
            else:
                rest(service).modify(ALICE, ids[-1], {"bandwidth": bw * 2})
        except (RejectedError, InputError):
            continue
    repo = service.books.store
    assert isinstance(repo, MemoryRepository)
    assert _clashes(list(repo.booked()), T0) == []
