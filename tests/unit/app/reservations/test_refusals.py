"""Refusals are remembered only while the mirror's network stands still."""

from __future__ import annotations

from typing import Any

import pytest

from braid.adapters.prometheus import PrometheusMetrics
from braid.app.errors import RejectedError
from braid.app.records import User
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from braid.core.model.instants import format_instant
from braid.core.planning.planner import Planner
from tests.unit.app.reservations.rest_shape import rest

T0 = 1_800_000_000
ALICE = User("alice", "user")
# One 10 Mbit/s link: a request for 8 fits only where nothing else is booked.
LINE: dict[str, Any] = {
    "nodes": [{"id": "A"}, {"id": "B"}],
    "links": [{"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1}],
}


def body(bw: int = 8, start: int = 100, end: int = 200, **extra: Any) -> dict[str, Any]:
    window = {"start": format_instant(T0 + start), "end": format_instant(T0 + end)}
    return {"src": "A", "dst": "B", "bandwidth": bw, **window, **extra}


class CountingPlanner(Planner):
    """The real planner, counting how often it is asked."""

    asked = 0

    def decide(self, item: Any) -> Any:
        self.asked += 1
        return super().decide(item)


@pytest.fixture
def service() -> ReservationService:
    service = ReservationService(MemoryRepository(), clock=lambda: T0, metrics=PrometheusMetrics())
    service.start(LINE)
    counting = CountingPlanner(service.topology)
    for booking in service.books.mirror.network.bookings.values():
        counting.network.commit(booking)
    service.books.mirror.planner = counting
    return service


def refusal(service: ReservationService, sent: dict[str, Any]) -> RejectedError:
    with pytest.raises(RejectedError) as refused:
        rest(service).reserve(ALICE, sent)
    return refused.value


def asked(service: ReservationService) -> int:
    planner = service.books.mirror.planner
    assert isinstance(planner, CountingPlanner)
    return planner.asked


def test_the_same_refusal_is_served_again_without_planning(service: ReservationService) -> None:
    rest(service).reserve(ALICE, body(bw=5))
    first = refusal(service, body())
    before = asked(service)
    again = refusal(service, body())
    assert asked(service) == before
    assert (again.reason, again.alternatives) == (first.reason, first.alternatives)
    assert first.alternatives  # the 409 still carries its ready-to-post offers


def test_a_different_body_is_planned_on_its_own(service: ReservationService) -> None:
    rest(service).reserve(ALICE, body(bw=5))
    refusal(service, body())
    before = asked(service)
    other = refusal(service, body(description="another"))
    assert asked(service) == before + 1
    # The offers echo the body they answer.
    assert all(offer["body"]["description"] == "another" for offer in other.alternatives)


def test_any_change_of_the_network_forgets_the_refusals(service: ReservationService) -> None:
    rest(service).reserve(ALICE, body(bw=5))
    first = refusal(service, body())
    rest(service).reserve(ALICE, body(bw=5, start=200, end=300))  # the earliest start moves on
    before = asked(service)
    again = refusal(service, body())
    assert asked(service) == before + 1
    assert again.alternatives != first.alternatives


def rejections(service: ReservationService, kind: str) -> float:
    assert isinstance(service.metrics, PrometheusMetrics)
    found = service.metrics.registry.get_sample_value("braid_rejections_total", {"reason": kind})
    return found or 0.0


def test_a_refusal_writes_its_instants_in_iso_8601_and_is_counted_by_its_kind(
    service: ReservationService,
) -> None:
    rest(service).reserve(ALICE, body(bw=5))
    one_path = refusal(service, body())
    window = f"[{format_instant(T0 + 100)}, {format_instant(T0 + 200)})"
    assert one_path.reason.startswith(
        f"no single path has 8 Mbit/s free between A and B throughout {window}; "
        f"earliest feasible start for the same duration: {format_instant(T0 + 200)}; "
    )
    split = refusal(service, body(max_paths=2))
    assert split.reason.startswith("only 5 Mbit/s of the 8 Mbit/s asked can be carried")
    assert f"between A and B in {window}" in split.reason
    # Nothing fits on one path; only some of it fits over several.
    assert (rejections(service, "no_path"), rejections(service, "capacity")) == (1, 1)
