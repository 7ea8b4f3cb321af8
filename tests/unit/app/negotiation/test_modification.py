"""A modify's new request: what changes, what stays, and what is refused (naming the field)."""

from __future__ import annotations

import pytest

from braid.app.errors import RejectedError
from braid.app.negotiation.modification import Modification, modified
from braid.app.negotiation.results import NegotiationRequest, NegotiationResult
from braid.core.errors import InputError

G = 10**9
NOW = 1_000_000
OLD = NegotiationRequest(
    "r1", "site-a", "a-host", "site-b", "b-host", 3 * G, NOW + 600, NOW + 3600, None, 2
)


def test_only_the_given_fields_change() -> None:
    new = modified(OLD, Modification(bandwidth=5 * G), NOW)
    assert new == NegotiationRequest(
        "r1", "site-a", "a-host", "site-b", "b-host", 5 * G, NOW + 600, NOW + 3600, None, 2
    )
    moved = modified(OLD, Modification(start=NOW + 60, end=NOW + 120, max_paths=1), NOW)
    assert (moved.start, moved.end, moved.max_paths, moved.bandwidth) == (
        NOW + 60, NOW + 120, 1, 3 * G
    )  # fmt: skip
    assert modified(OLD, Modification(strategy="full-offers"), NOW).strategy == "full-offers"


def test_a_running_window_is_modified_from_now_on() -> None:
    running = modified(OLD, Modification(bandwidth=G), NOW + 1800)
    assert (running.start, running.end) == (NOW + 1800, NOW + 3600)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (Modification(), "body"),
        (Modification(bandwidth=0), "bandwidth"),
        (Modification(start=NOW - 60), "window.start"),
        (Modification(end=NOW + 600), "window.end"),
        (Modification(start=NOW + 4000), "window.end"),
        (Modification(max_paths=9), "max_paths"),
    ],
)
def test_bad_changes_name_the_field(change: Modification, field: str) -> None:
    with pytest.raises(InputError) as caught:
        modified(OLD, change, NOW)
    assert caught.value.field == field


def test_a_reservation_that_has_ended_is_not_modified() -> None:
    with pytest.raises(RejectedError, match="has ended"):
        modified(OLD, Modification(bandwidth=G), NOW + 3600)
    later = modified(OLD, Modification(end=NOW + 7200), NOW + 3600)  # a new end: it runs on
    assert (later.start, later.end) == (NOW + 3600, NOW + 7200)


def test_the_request_round_trips_with_the_result() -> None:
    result = NegotiationResult("r1", True, transaction="t1", request=OLD)
    assert NegotiationResult.from_dict(result.to_dict()).request == OLD
    older = result.to_dict()
    del older["request"]  # written before modify existed
    assert NegotiationResult.from_dict(older).request is None
