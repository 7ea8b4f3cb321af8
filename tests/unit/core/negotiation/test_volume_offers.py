"""A volume across domains composed from their offers over time."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.negotiation.strategies import DomainPath, Offer, fits_offers
from braid.core.negotiation.volume_offers import (
    OfferStep,
    RateStep,
    Timelines,
    VolumeComposition,
    VolumeRefusal,
    compose_volume,
    offers_at,
)

PATHS: list[DomainPath] = [("a", "w1", "b"), ("a", "w2", "b")]


def steps_of(domain: str, *parts: tuple[int, int, int]) -> list[OfferStep]:
    return [OfferStep(s, e, Offer(domain, bw)) for s, e, bw in parts]


def flat(domain: str, bw: int, start: int = 0, end: int = 100) -> list[OfferStep]:
    return steps_of(domain, (start, end, bw))


def test_one_path_fills_from_not_before_and_cuts_the_last_second() -> None:
    timelines = {"a": flat("a", 10), "w1": flat("w1", 10), "b": flat("b", 10)}
    result = compose_volume(95, [PATHS[0]], timelines, 0, 100)
    assert isinstance(result, VolumeComposition)
    # 95 bits at 10 bit/s: 10 seconds, five at 10 and five at 9.
    assert result.completion == 10
    assert [(s.start, s.end, s.path_rates) for s in result.steps] == [(0, 5, (10,)), (5, 10, (9,))]
    assert sum(s.bits for s in result.steps) == 95


def test_two_paths_share_a_domain_that_caps_their_sum() -> None:
    timelines = {
        "a": flat("a", 15),
        "w1": flat("w1", 10),
        "w2": flat("w2", 10),
        "b": flat("b", 30),
    }
    result = compose_volume(150, PATHS, timelines, 0, 100)
    assert isinstance(result, VolumeComposition)
    assert result.completion == 10
    assert all(s.rate <= 15 for s in result.steps)


def test_the_rate_follows_the_offers_over_time() -> None:
    timelines = {
        "a": flat("a", 100),
        "w1": steps_of("w1", (0, 10, 2), (10, 20, 0), (20, 100, 8)),
        "b": flat("b", 100),
    }
    result = compose_volume(40, [PATHS[0]], timelines, 0, 100)
    assert isinstance(result, VolumeComposition)
    # 20 bits in [0, 10), nothing in [10, 20), then 8 bit/s: 20 more by 22.5 -> 23.
    assert result.completion == 23
    assert result.steps[0] == RateStep(0, 10, (2,))
    assert all(not (10 <= s.start < 20) for s in result.steps)


def test_refusal_tells_the_most_by_the_deadline_and_the_earliest_completion() -> None:
    timelines = {"a": flat("a", 10, 0, 200), "w1": flat("w1", 10, 0, 200), "b": flat("b", 10)}
    timelines["b"] = flat("b", 10, 0, 200)
    result = compose_volume(1000, [PATHS[0]], timelines, 0, 50, horizon=200)
    assert isinstance(result, VolumeRefusal)
    assert result.most_by_deadline == 500
    assert result.earliest_completion == 100


def test_refusal_without_a_completion_when_the_horizon_is_too_short() -> None:
    timelines = {"a": flat("a", 10), "w1": flat("w1", 10), "b": flat("b", 10)}
    result = compose_volume(10_000, [PATHS[0]], timelines, 0, 50)
    assert isinstance(result, VolumeRefusal)
    assert (result.most_by_deadline, result.earliest_completion) == (500, None)


def test_a_blind_domain_is_named_when_no_path_is_left() -> None:
    timelines = {"a": flat("a", 10), "b": flat("b", 10)}
    result = compose_volume(10, [PATHS[0]], timelines, 0, 50)
    assert isinstance(result, VolumeRefusal)
    assert "domain w1 is blind" in result.reason


def test_paths_through_a_blind_domain_are_left_out() -> None:
    timelines = {"a": flat("a", 10), "w1": flat("w1", 10), "b": flat("b", 10)}
    result = compose_volume(100, PATHS, timelines, 0, 50)
    assert isinstance(result, VolumeComposition)
    assert all(s.path_rates[1] == 0 for s in result.steps)


def test_max_rate_caps_the_total() -> None:
    timelines = {"a": flat("a", 10), "w1": flat("w1", 10), "b": flat("b", 10)}
    result = compose_volume(40, [PATHS[0]], timelines, 0, 50, max_rate=4)
    assert isinstance(result, VolumeComposition)
    assert result.completion == 10
    assert all(s.rate <= 4 for s in result.steps)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"bits": 0}, "volume"),
        ({"deadline": 0}, "deadline"),
        ({"horizon": 10}, "horizon"),
        ({"max_rate": 0}, "max_rate"),
        ({"paths": []}, "paths"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {
        "bits": 10,
        "paths": [PATHS[0]],
        "timelines": {"a": flat("a", 1)},
        "not_before": 0,
        "deadline": 50,
    }
    args.update(kwargs)
    with pytest.raises(InputError) as raised:
        compose_volume(**args)  # type: ignore[arg-type]
    assert raised.value.field == field


# -- properties ----------------------------------------------------------------

DOMAINS = ("a", "w1", "w2", "b")


@st.composite
def timelines_of(draw: st.DrawFn) -> Timelines:
    timelines: dict[str, list[OfferStep]] = {}
    for domain in DOMAINS:
        cuts = sorted(draw(st.sets(st.integers(1, 29), max_size=4)) | {0, 30})
        steps = []
        for start, end in itertools.pairwise(cuts):
            per_path = draw(st.dictionaries(st.integers(0, 1), st.integers(0, 12), max_size=2))
            steps.append(OfferStep(start, end, Offer(domain, draw(st.integers(0, 12)), per_path)))
        timelines[domain] = steps
    return timelines


def per_second_rates(
    paths: Sequence[DomainPath], timelines: Timelines, start: int, end: int, max_rate: int | None
) -> list[int]:
    """The best total each second, from a composition on a one-second horizon."""
    rates = []
    for second in range(start, end):
        one = compose_volume(10**9, paths, timelines, second, second + 1, max_rate=max_rate)
        rates.append(one.most_by_deadline if isinstance(one, VolumeRefusal) else 10**9)
    return rates


@settings(max_examples=150, deadline=None)
@given(
    timelines=timelines_of(),
    bits=st.integers(1, 400),
    not_before=st.integers(0, 10),
    max_rate=st.none() | st.integers(1, 20),
)
def test_profile_fits_every_offer_is_exact_and_earliest(
    timelines: Timelines, bits: int, not_before: int, max_rate: int | None
) -> None:
    result = compose_volume(bits, PATHS, timelines, not_before, 30, max_rate=max_rate)
    rates = per_second_rates(PATHS, timelines, not_before, 30, max_rate)
    # Brute force: fill second by second; done in the first second the sum reaches bits.
    moved, brute = 0, None
    for second, rate in enumerate(rates, start=not_before):
        moved += rate
        if moved >= bits:
            brute = second + 1
            break
    if isinstance(result, VolumeRefusal):
        assert brute is None
        assert result.most_by_deadline == sum(rates)
        return
    assert result.completion == brute
    assert sum(s.bits for s in result.steps) == bits
    for step in result.steps:
        assert step.start >= not_before
        assert max_rate is None or step.rate <= max_rate
        for second in range(step.start, step.end):
            assert fits_offers(PATHS, step.path_rates, offers_at(timelines, second))
