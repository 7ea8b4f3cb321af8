"""A refusal is a typed value with its facts; each wire format writes its instants its own way."""

from __future__ import annotations

from typing import Any

from braid.core.model.instants import readable_instant
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.model.units import FOREVER
from braid.core.multipath import MdiPolicy, SplitRefusal, split_fixed
from braid.core.planning.decisions import Decision, Refused, TenantReserved
from braid.core.planning.planner import Planner
from braid.core.planning.refusals import (
    DelayImbalance,
    NoSinglePath,
    NoStart,
    NothingFree,
    TenantShort,
    TooLittle,
)
from braid.core.planning.requests import parse_request

M = 10**6
T = 1_798_794_000  # 2027-01-01T09:00:00Z
HOUR = 3600


def square(slow_ms: float = 2) -> Topology:
    """A-B-D (1 ms a link) and A-C-D (`slow_ms` a link), 10 Mbit/s each; E stands alone."""
    links = [("AB", "A", "B", 1), ("BD", "B", "D", 1), ("AC", "A", "C", slow_ms)]
    links.append(("CD", "C", "D", slow_ms))
    return topology_from_dict(
        {
            "nodes": [{"id": n} for n in "ABCDE"],
            "links": [
                {"id": i, "a": a, "b": b, "capacity": 10, "latency_ms": ms} for i, a, b, ms in links
            ],
        }
    )


def decide(planner: Planner, **fields: Any) -> Decision:
    return planner.handle(parse_request(fields, planner.network.topology))


def refused(planner: Planner, **fields: Any) -> Refused:
    decision = decide(planner, **fields)
    assert isinstance(decision, Refused), decision
    return decision


def wrapped(t: int) -> str:
    return f"<{t}>"


def test_one_path_refused_names_its_window_and_says_it_in_either_form() -> None:
    planner = Planner(square())
    decide(planner, id="a", src="A", dst="D", bandwidth=8, start=T, end=T + HOUR)
    no = refused(planner, id="b", src="A", dst="D", bandwidth=12, start=T, end=T + HOUR)
    assert no.why == NoSinglePath("A", "D", 12 * M, T, T + HOUR)
    assert no.reason == no.text()
    assert no.text() == (
        f"no single path has 12 Mbit/s free between A and D throughout [{T}, {T + HOUR}); "
        "a split over several paths (max_paths >= 2) could carry it: max-flow bound 12 Mbit/s; "
        "highest feasible bandwidth in the window: 10 Mbit/s"
    )
    decide(planner, id="c", src="A", dst="D", bandwidth=8, start=T, end=T + HOUR)
    later = refused(planner, id="d", src="A", dst="D", bandwidth=5, start=T, end=T + HOUR)
    assert later.alternatives is not None and later.alternatives.earliest_start == T + HOUR
    assert later.text(readable_instant) == (
        "no single path has 5 Mbit/s free between A and D "
        "throughout [2027-01-01T09:00:00Z, 2027-01-01T10:00:00Z); "
        "earliest feasible start for the same duration: 2027-01-01T10:00:00Z; "
        "highest feasible bandwidth in the window: 2 Mbit/s"
    )


def test_every_instant_of_every_kind_goes_through_the_writer() -> None:
    planner = Planner(square())
    decide(planner, id="a", src="A", dst="D", bandwidth=20, start=T, end=T + HOUR, max_paths=2)
    window = {"start": T, "end": T + HOUR}
    refusals = [
        refused(planner, id="b", src="A", dst="D", bandwidth=5, **window),
        refused(planner, id="c", src="A", dst="D", bandwidth=5, max_paths=2, **window),
        refused(planner, id="d", src="A", dst="D", mode="max-bandwidth", **window),
        refused(
            planner, id="e", src="A", dst="D", bandwidth=5, mode="earliest",
            duration=HOUR, not_before=T, not_after=T + HOUR,
        ),
        refused(planner, id="f", src="A", dst="D", bandwidth=5, mode="tenant", tenant="x", start=T),
    ]  # fmt: skip
    kinds = [type(r.why) for r in refusals]
    assert kinds == [NoSinglePath, TooLittle, NothingFree, NoStart, TenantShort]
    for r in refusals:
        written = r.text(wrapped)
        assert written.replace("<", "").replace(">", "") == r.text()
        assert f"<{T}>" in written


def test_a_split_refusal_keeps_the_facts_and_the_words_of_the_split_search() -> None:
    planner = Planner(square())
    decide(planner, id="a", src="A", dst="D", bandwidth=6, start=T, end=T + HOUR)
    found = split_fixed(planner.network, "A", "D", 15 * M, T, T + HOUR, max_paths=2)
    assert isinstance(found, SplitRefusal)
    no = refused(
        planner, id="b", src="A", dst="D", bandwidth=15, start=T, end=T + HOUR, max_paths=2
    )
    assert no.why == TooLittle("A", "D", T, T + HOUR, 15 * M, 14 * M, 14 * M, 2)
    assert no.why.text() == found.reason
    assert no.reason.startswith(found.reason)


def test_a_packet_split_refused_for_its_delay_imbalance_says_how_much() -> None:
    planner = Planner(square(slow_ms=20), policy=MdiPolicy(refuse_above=0.25))
    fields = {"src": "A", "dst": "D", "bandwidth": 15, "start": T, "end": T + HOUR}
    no = refused(planner, id="b", max_paths=2, split="packet", **fields)
    assert isinstance(no.why, DelayImbalance)
    assert (no.why.refuse_above, no.why.need, no.why.max_paths) == (0.25, 15 * M, 2)
    assert no.why.seen > 0.25
    assert "delay imbalance (MDI) of at most 0.25" in no.reason
    assert f"MDI {no.why.seen:.3f}" in no.text(readable_instant)


def test_nothing_free_and_no_start_carry_their_windows() -> None:
    planner = Planner(square())
    decide(planner, id="a", src="A", dst="D", bandwidth=20, start=T, end=T + HOUR, max_paths=2)
    widest = refused(planner, id="b", src="A", dst="D", mode="max-bandwidth", start=T, end=T + 60)
    assert widest.why == NothingFree("A", "D", T, T + 60)
    assert widest.max_bandwidth == 0 and widest.alternatives is None
    assert widest.text(readable_instant) == (
        "no bandwidth is free between A and D in [2027-01-01T09:00:00Z, 2027-01-01T09:01:00Z)"
    )
    late = refused(
        planner, id="c", src="A", dst="D", bandwidth=5, mode="earliest",
        duration=HOUR, not_before=T, not_after=T + HOUR,
    )  # fmt: skip
    assert late.why == NoStart("A", "D", 5 * M, HOUR, T, T + HOUR)
    assert late.text(readable_instant).startswith(
        "no start from 2027-01-01T09:00:00Z ending by 2027-01-01T10:00:00Z gives 5 Mbit/s"
    )


def test_a_tenant_s_shortfall_is_typed_whether_booked_or_refused() -> None:
    planner = Planner(square())
    short = decide(
        planner, id="t1", mode="tenant", tenant="x", src="A", dst="D", bandwidth=25, start=T
    )
    assert isinstance(short, TenantReserved)
    assert short.why == TenantShort("x", "A", "D", 25 * M, 20 * M, T, FOREVER, joined=True)
    assert short.reason == (
        "tenant x gets 20 Mbit/s of 25 Mbit/s: no further path has free capacity "
        f"between A and D in [{T}, open-ended)"
    )
    alone = refused(
        planner, id="t2", mode="tenant", tenant="y", src="A", dst="E", bandwidth=1, start=T
    )
    assert alone.why == TenantShort("y", "A", "E", M, 0, T, FOREVER, joined=False)
    assert alone.reason == "tenant y gets nothing of 1 Mbit/s: no path joins A and E"
