"""The planner end to end on small networks: decisions, online state, invariants."""

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from braid.adapters.plan_contract import encode
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.planning.invariants import booking_problems, overbooking, split_problems
from braid.core.planning.planner import Planner
from braid.core.planning.requests import Release, Request, parse_request

MBPS = 10**6


def square() -> Topology:
    """A-B-D and A-C-D, 10 Mbit/s each; the B route is the faster one."""
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


def handle(planner: Planner, item: Request | Release) -> dict[str, Any]:
    return encode(planner.handle(item))


def run(planner: Planner, **fields: Any) -> dict[str, Any]:
    """The decision as the plan contract writes it: these tests pin that contract too."""
    return encode(planner.handle(parse_request(fields, planner.network.topology)))


def test_fixed_books_the_fastest_path_then_the_next_request_sees_it() -> None:
    planner = Planner(square())
    first = run(planner, id="r1", src="A", dst="D", bandwidth=6, start=0, end=100)
    assert first["status"] == "reserved"
    assert first["paths"] == [{"nodes": ["A", "B", "D"], "links": ["AB", "BD"], "bandwidth": 6}]
    assert first["recommended_streams"] == 2 and first["weights"] == [1.0]
    second = run(planner, id="r2", src="A", dst="D", bandwidth=6, start=50, end=150)
    assert second["paths"][0]["nodes"] == ["A", "C", "D"]


def test_rejection_names_the_alternatives() -> None:
    planner = Planner(square())
    run(planner, id="r1", src="A", dst="D", bandwidth=8, start=0, end=100)
    rejected = run(planner, id="r2", src="A", dst="D", bandwidth=12, start=0, end=100)
    assert rejected["status"] == "rejected"
    assert rejected["alternatives"]["max_bandwidth"] == 10
    assert rejected["alternatives"]["max_flow"] == 12
    assert "max_paths" in rejected["reason"]
    waits = run(planner, id="r3", src="A", dst="D", bandwidth=9, start=50, end=150, max_paths=1)
    # C route has 10 free: fits. The B route would need to wait until 100.
    assert waits["status"] == "reserved"
    late = run(planner, id="r4", src="A", dst="D", bandwidth=5, start=50, end=150)
    assert late["status"] == "rejected"
    assert late["alternatives"]["earliest_start"] == 100  # the B route frees at 100


def test_split_over_two_paths_when_one_is_not_enough() -> None:
    planner = Planner(square())
    got = run(planner, id="r", src="A", dst="D", bandwidth=16, start=0, end=10, max_paths=2)
    assert got["status"] == "reserved" and got["bandwidth"] == 16
    assert sorted(p["bandwidth"] for p in got["paths"]) == [8, 8]
    assert got["recommended_streams"] == 4 and got["max_flow"] == 20
    assert overbooking(planner.network) == []


def test_earliest_and_release() -> None:
    planner = Planner(square())
    run(planner, id="a", src="A", dst="D", bandwidth=10, start=0, end=100, max_paths=2)
    run(planner, id="b", src="A", dst="D", bandwidth=10, start=0, end=200)
    got = run(
        planner, id="e", mode="earliest", src="A", dst="D", bandwidth=5, duration=50, not_before=0
    )
    assert (got["status"], got["start"], got["end"]) == ("reserved", 100, 150)
    released = handle(planner, Release("a"))
    assert released["status"] == "released"
    assert handle(planner, Release("a"))["status"] == "error"
    again = run(
        planner, id="e2", mode="earliest", src="A", dst="D", bandwidth=5, duration=50, not_before=0
    )
    assert again["start"] == 0


def test_max_bandwidth_answers_without_booking_unless_asked() -> None:
    planner = Planner(square())
    answer = run(planner, id="m", mode="max-bandwidth", src="A", dst="D", start=0, end=10)
    assert (answer["status"], answer["max_bandwidth"], answer["max_flow"]) == ("answered", 10, 20)
    assert planner.network.bookings == {}
    split = run(
        planner,
        id="m2",
        mode="max-bandwidth",
        src="A",
        dst="D",
        start=0,
        end=10,
        max_paths=2,
        reserve=True,
    )
    assert (split["status"], split["max_bandwidth"]) == ("reserved", 20)
    nothing = run(planner, id="m3", mode="max-bandwidth", src="A", dst="D", start=5, end=10)
    assert nothing["status"] == "rejected" and nothing["max_bandwidth"] == 0


def test_all_slots_lists_start_times() -> None:
    planner = Planner(square())
    run(planner, id="a", src="A", dst="D", bandwidth=20, start=100, end=200, max_paths=2)
    got = run(
        planner,
        id="s",
        mode="all-slots",
        src="A",
        dst="D",
        bandwidth=5,
        duration=50,
        window_start=0,
        window_end=400,
    )
    assert got["status"] == "answered"
    assert got["slots"] == [[0, 51], [200, 351]]


def test_all_slots_over_two_paths_find_starts_no_single_path_has() -> None:
    planner = Planner(square())
    run(planner, id="a", src="A", dst="D", bandwidth=8, start=100, end=200)
    ask = {"mode": "all-slots", "src": "A", "dst": "D", "bandwidth": 12, "duration": 50}
    window = {"window_start": 0, "window_end": 400}
    alone = run(planner, id="s1", **ask, **window)
    assert alone["status"] == "answered" and alone["slots"] == []
    # 2 Mbit/s left on A-B-D while "a" lasts, 10 on A-C-D: 12 together throughout.
    split = run(planner, id="s2", **ask, **window, max_paths=2)
    assert split["slots"] == [[0, 351]]
    assert set(planner.network.bookings) == {"a"}


def test_tenants_get_their_throughput_and_report_reallocations() -> None:
    planner = Planner(square())
    first = run(
        planner, id="t1", mode="tenant", tenant="x", src="A", dst="D", bandwidth=15, start=0
    )
    assert first["status"] == "reserved" and first["bandwidth"] == 15 and first.get("end") is None
    second = run(
        planner,
        id="t2",
        mode="tenant",
        tenant="y",
        src="A",
        dst="D",
        bandwidth=8,
        start=0,
        main_path=["A", "C", "D"],
    )
    assert second["bandwidth"] == 8
    assert [r["id"] for r in second["reallocated"]] == ["t1"]
    assert overbooking(planner.network) == []


def test_duplicate_id_is_an_error_and_changes_nothing() -> None:
    planner = Planner(square())
    run(planner, id="r", src="A", dst="D", bandwidth=1, start=0, end=10)
    again = run(planner, id="r", src="A", dst="D", bandwidth=1, start=0, end=10)
    assert again["status"] == "error" and again["field"] == "id"
    assert len(planner.network.bookings) == 1


request_strategy = st.fixed_dictionaries(
    {
        "src": st.sampled_from("ABCD"),
        "dst": st.sampled_from("ABCD"),
        "bandwidth": st.integers(1, 25),
        "start": st.integers(0, 50),
        "length": st.integers(1, 50),
        "mode": st.sampled_from(["fixed", "earliest", "max-bandwidth", "tenant"]),
        "max_paths": st.integers(1, 3),
        "split": st.sampled_from(["flow", "packet"]),
        "directional": st.booleans(),
        "release": st.integers(0, 12),
    }
)


def as_request(i: int, raw: dict[str, Any]) -> dict[str, Any]:
    base = {
        "id": f"r{i}",
        "src": raw["src"],
        "dst": raw["dst"],
        "mode": raw["mode"],
        "directional": raw["directional"],
    }
    if raw["mode"] != "max-bandwidth":
        base["bandwidth"] = raw["bandwidth"]
    if raw["mode"] in ("fixed", "max-bandwidth"):
        base |= {"start": raw["start"], "end": raw["start"] + raw["length"]}
    if raw["mode"] == "earliest":
        base |= {"duration": raw["length"], "not_before": raw["start"]}
    if raw["mode"] == "tenant":
        base |= {"tenant": f"t{i % 3}", "start": raw["start"]}
    else:
        base |= {"max_paths": raw["max_paths"], "split": raw["split"]}
    return base


@settings(max_examples=60, deadline=None)
@given(st.lists(request_strategy, max_size=14))
def test_random_sequences_never_overbook(raws: list[dict[str, Any]]) -> None:
    planner = Planner(square())
    for i, raw in enumerate(raws):
        data = as_request(i, raw)
        if raw["release"] < i and raw["release"] % 3 == 0:
            handle(planner, Release(f"r{raw['release']}"))
        if data["src"] == data["dst"]:
            continue
        decision = handle(planner, parse_request(data, planner.network.topology))
        assert decision["v"] == 1 and decision["id"] == data["id"]
        assert overbooking(planner.network) == []
        booking = planner.network.bookings.get(data["id"])
        if decision["status"] == "reserved":
            assert booking is not None
            assert (
                booking_problems(planner.network.topology, booking, data["src"], data["dst"]) == []
            )
            assert split_problems(booking.allocations, booking.bandwidth) == []
            assert len(booking.allocations) <= data.get("max_paths", 16)
        if decision["status"] == "reserved" and data["mode"] == "fixed":
            assert booking is not None and booking.bandwidth == data["bandwidth"] * MBPS
