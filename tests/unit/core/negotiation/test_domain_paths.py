"""k candidate domain-level paths between two sites."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.negotiation.domain_paths import domain_paths

# Seed 000 Fig. 6a: four sites, three regional networks with SDXs, two R&E WANs.
FIG_6A_KINDS = {
    "A": "site", "B": "site", "C": "site", "D": "site",
    "RN1": "sdx", "RN2": "sdx", "RN3": "sdx", "RE1": "wan", "RE2": "wan",
}  # fmt: skip
FIG_6A_LINKS = [
    ("A", "RN1"), ("B", "RN1"), ("C", "RN2"), ("D", "RN3"),
    ("RN1", "RE1"), ("RN1", "RE2"), ("RN2", "RE1"), ("RN2", "RE2"),
    ("RN3", "RE1"), ("RN3", "RE2"),
]  # fmt: skip


def test_fig_6a_two_wans_first_then_the_detours() -> None:
    paths = domain_paths(FIG_6A_KINDS, FIG_6A_LINKS, "A", "C", 4)
    assert paths == [
        ("A", "RN1", "RE1", "RN2", "C"),
        ("A", "RN1", "RE2", "RN2", "C"),
        ("A", "RN1", "RE1", "RN3", "RE2", "RN2", "C"),
        ("A", "RN1", "RE2", "RN3", "RE1", "RN2", "C"),
    ]


def test_sites_never_carry_transit() -> None:
    kinds = {"A": "site", "B": "site", "C": "site", "W": "wan"}
    links = [("A", "B"), ("B", "C"), ("A", "W"), ("W", "C")]
    assert domain_paths(kinds, links, "A", "C", 5) == [("A", "W", "C")]


def test_max_domains_bounds_the_length() -> None:
    paths = domain_paths(FIG_6A_KINDS, FIG_6A_LINKS, "A", "C", 4, max_domains=5)
    assert [len(p) for p in paths] == [5, 5]


def test_unconnected_sites_give_no_path() -> None:
    assert domain_paths({"A": "site", "B": "site"}, [], "A", "B", 3) == []


@pytest.mark.parametrize(
    ("kinds", "links", "src", "dst", "k", "field"),
    [
        ({"A": "site", "B": "site"}, [], "A", "B", 0, "k"),
        ({"A": "site", "B": "site"}, [], "A", "Z", 1, "dst"),
        ({"A": "site", "W": "wan"}, [], "A", "W", 1, "dst"),
        ({"A": "site", "B": "site"}, [], "A", "A", 1, "dst"),
        ({"A": "site", "B": "moon"}, [], "A", "B", 1, "domains[B].kind"),
        ({"A": "site", "B": "site"}, [("A", "Q")], "A", "B", 1, "links[0]"),
        ({"A": "site", "B": "site"}, [("A", "A")], "A", "B", 1, "links[0]"),
    ],
)
def test_bad_input_names_the_field(
    kinds: dict[str, str], links: list[tuple[str, str]], src: str, dst: str, k: int, field: str
) -> None:
    with pytest.raises(InputError) as info:
        domain_paths(kinds, links, src, dst, k)
    assert info.value.field == field


@st.composite
def graphs(draw: st.DrawFn) -> tuple[dict[str, str], list[tuple[str, str]]]:
    n = draw(st.integers(2, 7))
    names = [f"d{i}" for i in range(n)]
    kinds = {"d0": "site", "d1": "site"}
    kinds |= {name: draw(st.sampled_from(("site", "wan", "sdx"))) for name in names[2:]}
    pairs = list(itertools.combinations(names, 2))
    links = draw(st.lists(st.sampled_from(pairs), max_size=12))
    return kinds, links


def brute_force(
    kinds: dict[str, str], links: list[tuple[str, str]], src: str, dst: str
) -> list[tuple[str, ...]]:
    edges = {frozenset(link) for link in links}
    middle = [d for d in kinds if d not in (src, dst) and kinds[d] != "site"]
    found = []
    for size in range(len(middle) + 1):
        for inner in itertools.permutations(middle, size):
            path = (src, *inner, dst)
            if all(frozenset(pair) in edges for pair in itertools.pairwise(path)):
                found.append(path)
    return sorted(found, key=lambda p: (len(p), p))


@settings(max_examples=300)
@given(graphs(), st.integers(1, 6))
def test_paths_are_the_k_shortest_simple_ones(
    graph: tuple[dict[str, str], list[tuple[str, str]]], k: int
) -> None:
    kinds, links = graph
    paths = domain_paths(kinds, links, "d0", "d1", k)
    edges = {frozenset(link) for link in links}
    for path in paths:
        assert path[0] == "d0" and path[-1] == "d1"
        assert len(set(path)) == len(path)
        assert all(kinds[d] != "site" for d in path[1:-1])
        assert all(frozenset(pair) in edges for pair in itertools.pairwise(path))
    assert paths == brute_force(kinds, links, "d0", "d1")[:k]


@settings(max_examples=100)
@given(graphs(), st.integers(1, 6), st.randoms(use_true_random=False))
def test_order_of_the_input_does_not_matter(
    graph: tuple[dict[str, str], list[tuple[str, str]]], k: int, rnd: random.Random
) -> None:
    kinds, links = graph
    shuffled = [(b, a) if rnd.random() < 0.5 else (a, b) for a, b in links]
    rnd.shuffle(shuffled)
    reordered = dict(sorted(kinds.items(), reverse=True))
    assert domain_paths(reordered, shuffled, "d0", "d1", k) == domain_paths(
        kinds, links, "d0", "d1", k
    )
