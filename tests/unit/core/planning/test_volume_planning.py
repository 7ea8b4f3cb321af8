"""Volume and quickest requests through the planner, as the plan contract writes them."""

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.adapters.plan_contract import encode
from braid.core.errors import InputError
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.planning.decisions import VolumeReserved
from braid.core.planning.invariants import overbooking
from braid.core.planning.planner import Planner
from braid.core.planning.requests import Release, parse_request

MB = 10**6  # bytes; 1 MB at 1 Mbit/s takes 8 s


def square() -> Topology:
    """A-B-D and A-C-D, 10 Mbit/s each."""
    return topology_from_dict(
        {
            "nodes": [{"id": n} for n in "ABCD"],
            "links": [
                {"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1},
                {"id": "BD", "a": "B", "b": "D", "capacity": 10, "latency_ms": 1},
                {"id": "AC", "a": "A", "b": "C", "capacity": 10, "latency_ms": 2},
                {"id": "CD", "a": "C", "b": "D", "capacity": 10, "latency_ms": 2},
            ],
        }
    )


def run(planner: Planner, **fields: Any) -> dict[str, Any]:
    return encode(planner.handle(parse_request(fields, planner.network.topology)))


def moved_bytes(line: dict[str, Any]) -> float:
    return float(sum(s["rate"] * 10**6 * (s["end"] - s["start"]) for s in line["profile"]) / 8)


def test_a_volume_uses_both_paths_and_finishes_as_early_as_it_can() -> None:
    planner = Planner(square())
    # 20 Mbit/s over both paths: 50 MB (400 Mbit) takes 20 s.
    line = run(planner, id="v", mode="volume", src="A", dst="D", volume="50MB", not_before=100)
    assert line["status"] == "reserved"
    assert line["volume"] == 50 * MB
    assert line["start"] == 100 and line["completion"] == line["end"] == 120
    assert line["peak"] == 20
    [step] = line["profile"]
    assert step["rate"] == 20 and len(step["paths"]) == 2
    assert moved_bytes(line) >= 50 * MB


def test_a_volume_goes_around_what_is_booked_and_the_next_request_sees_it() -> None:
    planner = Planner(square())
    run(planner, id="r", src="A", dst="D", bandwidth=10, start=0, end=10)
    line = run(planner, id="v", mode="volume", src="A", dst="D", volume="25MB", not_before=0)
    # 10 Mbit/s for the first 10 s (100 Mbit), then 20 Mbit/s: the other 100 Mbit by 15.
    assert [(s["start"], s["end"], s["rate"]) for s in line["profile"]] == [
        (0, 10, 10),
        (10, 15, 20),
    ]
    after = run(planner, id="r2", src="A", dst="D", bandwidth=1, start=12, end=14)
    assert after["status"] == "rejected"
    assert not overbooking(planner.network)


def test_release_frees_every_step() -> None:
    planner = Planner(square())
    run(planner, id="r", src="A", dst="D", bandwidth=10, start=0, end=10)
    booked = run(planner, id="v", mode="volume", src="A", dst="D", volume="25MB", not_before=0)
    assert len(booked["profile"]) == 2
    assert set(planner.network.bookings) == {"r", "v~0", "v~1"}
    released = encode(planner.handle(Release("v")))
    assert released["status"] == "released" and released["profile"] == booked["profile"]
    assert set(planner.network.bookings) == {"r"}
    again = encode(planner.handle(Release("v")))
    assert again["status"] == "error" and again["field"] == "id"


def test_a_missed_deadline_says_how_much_fits_and_when_all_would() -> None:
    planner = Planner(square())
    line = run(
        planner, id="v", mode="volume", src="A", dst="D", volume="50MB",
        not_before=0, deadline=10,
    )  # fmt: skip
    assert line["status"] == "rejected"
    assert line["most_by_deadline"] == 25 * MB  # 20 Mbit/s for 10 s
    assert line["earliest_completion"] == 20
    assert planner.network.bookings == {}


def test_flattest_spreads_to_the_deadline_at_the_lowest_peak() -> None:
    planner = Planner(square())
    line = run(
        planner, id="v", mode="volume", src="A", dst="D", volume="25MB",
        not_before=0, deadline=40, objective="flattest",
    )  # fmt: skip
    assert line["status"] == "reserved"
    assert line["peak"] == 5 and line["completion"] == 40


def test_max_rate_and_max_paths_cap_the_profile() -> None:
    planner = Planner(square())
    capped = run(
        planner, id="v", mode="volume", src="A", dst="D", volume="10MB",
        not_before=0, max_rate="4M",
    )  # fmt: skip
    assert capped["peak"] == 4 and capped["completion"] == 20
    one = run(
        planner, id="w", mode="volume", src="A", dst="D", volume="10MB", not_before=0, max_paths=1
    )
    assert all(len(s["paths"]) == 1 for s in one["profile"])


def test_quickest_answers_without_booking() -> None:
    planner = Planner(square())
    line = run(planner, id="q", mode="quickest", src="A", dst="D", volume="50MB", not_before=5)
    assert line["status"] == "answered"
    assert line["completion"] == 25 and line["volume"] == 50 * MB
    assert planner.network.bookings == {}


def test_quickest_on_a_pair_never_joined_is_refused_with_no_completion() -> None:
    topology = topology_from_dict(
        {
            "nodes": [{"id": n} for n in "ABCD"],
            "links": [
                {"id": "AB", "a": "A", "b": "B", "capacity": 10, "latency_ms": 1},
                {"id": "CD", "a": "C", "b": "D", "capacity": 10, "latency_ms": 1},
            ],
        }
    )
    planner = Planner(topology)
    line = run(planner, id="q", mode="quickest", src="A", dst="D", volume="1MB", not_before=0)
    assert line["status"] == "rejected" and "earliest_completion" not in line
    assert "never" in line["reason"]


def test_a_step_id_that_clashes_with_a_booking_is_refused_and_changes_nothing() -> None:
    planner = Planner(square())
    run(planner, id="v~0", src="A", dst="B", bandwidth=1, start=1000, end=2000)
    line = run(planner, id="v", mode="volume", src="A", dst="D", volume="1MB", not_before=0)
    assert line["status"] == "error" and line["field"] == "id"
    assert set(planner.network.bookings) == {"v~0"}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"volume": "1MB"}, "not_before"),
        ({"not_before": 0}, "volume"),
        ({"volume": "1Mb", "not_before": 0}, "volume"),
        ({"volume": "1MB", "not_before": 10, "deadline": 10}, "deadline"),
        ({"volume": "1MB", "not_before": 0, "objective": "flattest"}, "deadline"),
        ({"volume": "1MB", "not_before": 0, "objective": "slowest"}, "objective"),
        ({"volume": "1MB", "not_before": 0, "max_rate": 0}, "max_rate"),
        ({"volume": "1MB", "not_before": 0, "max_paths": 17}, "max_paths"),
        ({"volume": "1MB", "not_before": 0, "split": "packet"}, "split"),
        ({"volume": "1MB", "not_before": 0, "bandwidth": 5}, "bandwidth"),
    ],
)
def test_bad_volume_fields_are_named(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_request({"id": "v", "mode": "volume", "src": "A", "dst": "D", **fields}, square())
    assert raised.value.field == field


def test_quickest_takes_no_deadline() -> None:
    with pytest.raises(InputError) as raised:
        parse_request(
            {"id": "q", "mode": "quickest", "src": "A", "dst": "D", "volume": 1,
             "not_before": 0, "deadline": 5},
            square(),
        )  # fmt: skip
    assert raised.value.field == "deadline"


def test_a_volume_defaults_to_every_path() -> None:
    request = parse_request(
        {"id": "v", "mode": "volume", "src": "A", "dst": "D", "volume": 1, "not_before": 0},
        square(),
    )
    assert not isinstance(request, Release) and request.max_paths == 16


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["fixed", "volume", "release"]),
            st.integers(1, 60),
            st.integers(0, 50),
            st.integers(1, 20),
        ),
        max_size=10,
    )
)
def test_volumes_among_fixed_bookings_never_overbook(ops: list[tuple[str, int, int, int]]) -> None:
    planner = Planner(square())
    for i, (kind, amount, start, length) in enumerate(ops):
        if kind == "release":
            for volume in list(planner.volumes)[:1]:
                planner.handle(Release(volume))
            continue
        fields: dict[str, Any] = {"id": f"r{i}", "src": "A", "dst": "D"}
        if kind == "fixed":
            fields.update(bandwidth=min(amount, 20), start=start, end=start + length, max_paths=2)
        else:
            fields.update(mode="volume", volume=amount * MB, not_before=start)
        decision = planner.handle(parse_request(fields, planner.network.topology))
        if isinstance(decision, VolumeReserved):
            assert decision.profile.bytes >= amount * MB
            assert decision.profile.start >= start
        assert not overbooking(planner.network)
