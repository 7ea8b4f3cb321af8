"""Offer composition: equal splitting, partial offers, full offers (seed 000 §5.2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.negotiation.strategies import (
    STRATEGIES,
    Ask,
    Composition,
    DomainPath,
    Offer,
    Outcome,
    Refusal,
    compose,
    domain_amounts,
    equal_amounts,
    offer_probe,
)

M = 1_000_000
GBIT = 1000 * M


@dataclass
class Case:
    paths: list[DomainPath]
    offers: dict[str, Offer]
    hidden: dict[str, int]  # what each blind domain can really carry
    request: int

    def probe(self, ask: Ask) -> bool:
        return ask.total <= self.hidden[ask.domain]


@st.composite
def cases(draw: st.DrawFn, *, all_visible: bool = False, disjoint: bool = False) -> Case:
    pool = [f"x{i}" for i in range(draw(st.integers(1, 6)))]
    k = draw(st.integers(1, 4))
    paths: list[DomainPath] = []
    for i in range(k):
        if disjoint:
            length = draw(st.integers(1, 3))
            paths.append(tuple(f"p{i}d{j}" for j in range(length)))
        else:
            chosen = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=4, unique=True))
            paths.append(tuple(chosen))
    domains = sorted({d for p in paths for d in p})
    visible = domains if all_visible else draw(st.lists(st.sampled_from(domains), unique=True))
    offers = {}
    for d in visible:
        per_path = draw(st.dictionaries(st.integers(0, k - 1), st.integers(0, 30), max_size=2))
        offers[d] = Offer(d, draw(st.integers(0, 30)), per_path)
    hidden = {d: draw(st.integers(0, 30)) for d in domains if d not in offers}
    return Case(paths, offers, hidden, draw(st.integers(1, 40)))


def check_composition(case: Case, outcome: Outcome) -> None:
    """Splits sum to the request; no domain carries more than it offered or accepted."""
    if isinstance(outcome, Refusal):
        assert outcome.reason
        refused = [a for a in outcome.answers if not a.accepted]
        assert len(refused) <= 1 and (not refused or outcome.answers[-1] is refused[0])
        return
    assert outcome.granted == case.request == sum(outcome.path_amounts)
    assert all(a >= 0 for a in outcome.path_amounts)
    assert len(outcome.path_amounts) == len(case.paths)
    carried = domain_amounts(case.paths, outcome.path_amounts)
    assert dict(outcome.domain_amounts) == carried
    accepted = {a.ask.domain: a.ask.total for a in outcome.answers if a.accepted}
    assert all(a.accepted for a in outcome.answers)
    for domain, amount in carried.items():
        if domain in case.offers and outcome.strategy != "equal-split":
            offer = case.offers[domain]
            assert amount <= offer.bandwidth
            for index, path in enumerate(case.paths):
                if domain in path:
                    assert outcome.path_amounts[index] <= offer.cap(index)
        else:
            assert accepted[domain] == amount
        if domain in case.hidden:
            assert amount <= case.hidden[domain]


@settings(max_examples=300)
@given(cases(), st.sampled_from(STRATEGIES))
def test_every_composition_is_exact_and_within_offers(case: Case, strategy: str) -> None:
    probe = offer_probe(case.offers, case.probe)
    outcome = compose(strategy, case.request, case.paths, case.offers, probe)  # type: ignore[arg-type]
    check_composition(case, outcome)


@settings(max_examples=300)
@given(cases(all_visible=True))
def test_full_offers_succeed_whenever_equal_splitting_does(case: Case) -> None:
    equal = compose("equal-split", case.request, case.paths, case.offers, offer_probe(case.offers))
    full = compose("full-offers", case.request, case.paths, case.offers)
    if isinstance(equal, Composition):
        assert isinstance(full, Composition)


@settings(max_examples=200)
@given(cases(all_visible=True))
def test_partial_offers_with_every_domain_visible_are_full_offers(case: Case) -> None:
    partial = compose("partial-offers", case.request, case.paths, case.offers, case.probe)
    full = compose("full-offers", case.request, case.paths, case.offers)
    assert isinstance(partial, Composition) == isinstance(full, Composition)
    assert not partial.answers


@settings(max_examples=300)
@given(cases(all_visible=True, disjoint=True))
def test_full_offers_on_disjoint_paths_reach_the_sum_of_path_minima(case: Case) -> None:
    best = sum(min(case.offers[d].cap(i) for d in path) for i, path in enumerate(case.paths))
    full = compose("full-offers", case.request, case.paths, case.offers)
    assert isinstance(full, Composition) == (best >= case.request)


@settings(max_examples=200)
@given(cases(disjoint=True))
def test_partial_offers_succeed_whenever_equal_splitting_does(case: Case) -> None:
    probe = offer_probe(case.offers, case.probe)
    equal = compose("equal-split", case.request, case.paths, case.offers, probe)
    partial = compose("partial-offers", case.request, case.paths, case.offers, case.probe)
    if isinstance(equal, Composition):
        assert isinstance(partial, Composition)


@given(st.integers(1, 10**12), st.integers(1, 8))
def test_equal_amounts_sum_and_differ_by_at_most_one(request: int, count: int) -> None:
    parts = equal_amounts(request, count)
    assert sum(parts) == request and len(parts) == count
    assert max(parts) - min(parts) <= 1
    assert list(parts) == sorted(parts, reverse=True)


def test_equal_split_asks_each_domain_its_sum_and_stops_at_the_first_no() -> None:
    paths = [("A", "W1", "B"), ("A", "W2", "B")]
    asked: list[Ask] = []

    def probe(ask: Ask) -> bool:
        asked.append(ask)
        return ask.domain != "W1"

    outcome = compose("equal-split", 600 * M, paths, {}, probe)
    assert isinstance(outcome, Refusal)
    assert [a.domain for a in asked] == ["A", "W1"]
    assert asked[0].total == 600 * M and asked[0].per_path == ((0, 300 * M), (1, 300 * M))
    assert "W1" in outcome.reason
    assert [a.accepted for a in outcome.answers] == [True, False]


def test_partial_offers_take_visible_first_and_ask_blind_for_the_rest() -> None:
    paths = [("W1",), ("W2",), ("W3",)]
    offers = {"W1": Offer("W1", 400 * M)}
    asked: dict[str, int] = {}

    def probe(ask: Ask) -> bool:
        asked[ask.domain] = ask.total
        return True

    outcome = compose("partial-offers", 1000 * M, paths, offers, probe)
    assert isinstance(outcome, Composition)
    assert outcome.path_amounts == (400 * M, 300 * M, 300 * M)
    assert asked == {"W2": 300 * M, "W3": 300 * M}


def test_partial_offers_ask_nobody_when_visible_domains_suffice() -> None:
    offers = {"W1": Offer("W1", 2000 * M)}

    def probe(ask: Ask) -> bool:
        raise AssertionError(f"asked {ask}")

    outcome = compose("partial-offers", 1000 * M, [("W1",), ("W2",)], offers, probe)
    assert isinstance(outcome, Composition) and outcome.path_amounts == (1000 * M, 0)


def test_full_offers_need_every_domain_visible() -> None:
    outcome = compose("full-offers", M, [("W1",), ("W2",)], {"W1": Offer("W1", 5 * M)})
    assert isinstance(outcome, Refusal) and "W2" in outcome.reason


def test_a_domain_on_two_paths_must_carry_the_sum() -> None:
    paths = [("A", "W1", "B"), ("A", "W2", "B")]
    offers = {d: Offer(d, 10 * M) for d in ("W1", "W2", "B")} | {"A": Offer("A", 6 * M)}
    assert isinstance(compose("full-offers", 7 * M, paths, offers), Refusal)
    ok = compose("full-offers", 6 * M, paths, offers)
    assert isinstance(ok, Composition) and ok.domain_amounts["A"] == 6 * M


def test_full_offers_balance_the_paths() -> None:
    offers = {"W1": Offer("W1", 900 * M), "W2": Offer("W2", 900 * M)}
    outcome = compose("full-offers", 1000 * M, [("W1",), ("W2",)], offers)
    assert isinstance(outcome, Composition) and outcome.path_amounts == (500 * M, 500 * M)


def test_per_path_caps_bound_one_border_pair() -> None:
    paths = [("A", "W1"), ("A", "W2")]
    offers = {
        "A": Offer("A", 10 * M, {0: 2 * M}),
        "W1": Offer("W1", 10 * M),
        "W2": Offer("W2", 10 * M),
    }
    outcome = compose("full-offers", 9 * M, paths, offers)
    assert isinstance(outcome, Composition) and outcome.path_amounts[0] <= 2 * M


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("unknown", M, [("W",)], {}), "strategy"),
        (("full-offers", 0, [("W",)], {}), "bandwidth"),
        (("full-offers", M, [], {}), "paths"),
        (("full-offers", M, [("W", "X", "W")], {}), "paths[0]"),
        (("full-offers", M, [("W",), ()], {}), "paths[1]"),
        (("full-offers", M, [("W",)], {"W": Offer("W", -1)}), "offers[W]"),
        (("full-offers", M, [("W",)], {"W": Offer("X", 1)}), "offers[W]"),
        (("full-offers", M, [("W",)], {"W": Offer("W", 1, {3: 1})}), "offers[W].per_path"),
        (("equal-split", M, [("W",)], {}), "probe"),
    ],
)
def test_bad_input_names_the_field(args: Sequence[object], field: str) -> None:
    with pytest.raises(InputError) as info:
        compose(*args)  # type: ignore[arg-type]
    assert info.value.field == field


def test_offer_probe_answers_visible_from_offers_and_unknown_with_no() -> None:
    offers: Mapping[str, Offer] = {"W": Offer("W", 5, {0: 3})}
    probe = offer_probe(offers)
    assert probe(Ask("W", ((0, 3), (1, 2))))
    assert not probe(Ask("W", ((0, 4),)))
    assert not probe(Ask("W", ((1, 6),)))
    assert not probe(Ask("blind", ((0, 1),)))


def test_a_refusal_says_what_the_offers_compose_in_the_units_of_the_request() -> None:
    paths: list[DomainPath] = [("a", "w1", "c"), ("a", "w2", "c")]
    offers = {
        "a": Offer("a", 30 * GBIT, {0: 30 * GBIT, 1: 30 * GBIT}),
        "w1": Offer("w1", 0, {0: 0}),
        "w2": Offer("w2", 3 * GBIT, {1: 3 * GBIT}),
        "c": Offer("c", 30 * GBIT, {0: 30 * GBIT, 1: 30 * GBIT}),
    }
    outcome = compose("partial-offers", 30 * GBIT, paths, offers)
    assert isinstance(outcome, Refusal)
    assert "offers compose only 3 Gbit/s of 30 Gbit/s" in outcome.reason
