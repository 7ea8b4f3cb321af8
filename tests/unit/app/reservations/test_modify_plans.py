"""A modification's split describes its new paths: as a fresh booking would, when it re-plans."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.app.errors import RejectedError
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from tests.unit.app.reservations.rest_shape import rest
from tests.unit.app.reservations.test_service import ALICE, SQUARE, Clock, at

SPLIT_FIELDS = ("paths", "weights", "mdi", "resequence", "recommended_streams", "split")


def _service() -> ReservationService:
    service = ReservationService(MemoryRepository(), clock=Clock(), hold_seconds=60)
    service.start(SQUARE)
    return service


def _body(bw: int, max_paths: int, start: int = 100, end: int = 200) -> dict[str, Any]:
    return {
        "src": "A",
        "dst": "D",
        "bandwidth": bw,
        "start": at(start),
        "end": at(end),
        "max_paths": max_paths,
    }


def _split(view: dict[str, Any]) -> dict[str, Any]:
    return {k: view[k] for k in SPLIT_FIELDS}


def test_growing_onto_a_second_path_reports_the_new_split() -> None:
    service = _service()
    small = rest(service).reserve(ALICE, _body(4, max_paths=2))
    assert len(small["paths"]) == 1 and small["weights"] == [1.0]
    grown = rest(service).modify(ALICE, small["id"], {"bandwidth": 16})
    assert len(grown["paths"]) == 2
    assert len(grown["weights"]) == 2 and abs(sum(grown["weights"]) - 1) < 1e-6
    assert grown["recommended_streams"] > small["recommended_streams"]
    assert grown["mdi"] > 0


@settings(max_examples=150, deadline=None)
@given(
    before=st.lists(
        st.tuples(st.integers(1, 10), st.integers(1, 3), st.integers(0, 150)), max_size=5
    ),
    first=st.tuples(st.integers(1, 10), st.integers(1, 3)),
    new_bandwidth=st.integers(1, 20),
)
def test_a_modification_that_replans_equals_a_fresh_booking(
    before: list[tuple[int, int, int]],
    first: tuple[int, int],
    new_bandwidth: int,
) -> None:
    # Two services with the same history: one modifies, the other cancels
    # and books the modified request afresh on the same state.
    modified, fresh = _service(), _service()
    made = []
    for service in (modified, fresh):
        ids = []
        for bw, paths, start in [(first[0], first[1], 100), *before]:
            try:
                ids.append(rest(service).reserve(ALICE, _body(bw, paths, start, start + 100))["id"])
            except RejectedError:
                ids.append(None)
        made.append(ids)
    target_m, target_f = made[0][0], made[1][0]
    if target_m is None:
        return
    old = rest(modified).get(ALICE, target_m)
    try:
        got = rest(modified).modify(ALICE, target_m, {"bandwidth": new_bandwidth})
    except RejectedError:
        return
    assert len(got["weights"]) == len(got["paths"])
    shares = [p["bandwidth"] / got["bandwidth"] for p in got["paths"]]
    assert all(abs(w - s) < 1e-5 for w, s in zip(got["weights"], shares, strict=True))
    if [p["links"] for p in got["paths"]] == [p["links"] for p in old["paths"]]:
        return  # kept its paths (no re-route): the split keeps its proportions
    rest(fresh).cancel(ALICE, target_f)
    again = rest(fresh).reserve(ALICE, _body(new_bandwidth, first[1]))
    assert _split(got) == _split(again)
