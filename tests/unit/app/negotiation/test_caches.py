"""The route caches: what they keep is what a fresh computation gives, per view."""

from __future__ import annotations

from pathlib import Path

import yaml

from braid.app.negotiation.caches import RouteCaches, RouteKey
from braid.core.negotiation.domain_paths import domain_paths
from braid.core.negotiation.domains import global_view_from_dict
from braid.core.negotiation.routes import domain_pairs, route_legs
from braid.core.negotiation.strategies import Offer

EXAMPLE = Path(__file__).resolve().parents[4] / "src" / "braid" / "examples" / "fig6a.yaml"
VIEW = global_view_from_dict(yaml.safe_load(EXAMPLE.read_text()))
ROUTE: RouteKey = ("site-a", "a-dtn", "site-c", "c-dtn", 2)  # over re1 or re2
G = 10**9


def test_the_routes_kept_are_the_ones_found_afresh() -> None:
    caches = RouteCaches(VIEW)
    paths, legs = caches.routes(ROUTE)
    kinds = {d: spec.kind for d, spec in VIEW.domains.items()}
    fresh = domain_paths(kinds, domain_pairs(VIEW), "site-a", "site-c", 2)
    assert paths == list(fresh) and len(paths) == 2
    assert legs == tuple(route_legs(VIEW, p, "a-dtn", "c-dtn") for p in fresh)
    paths.clear()  # a caller's copy: what is kept does not change
    assert caches.routes(ROUTE) == (list(fresh), legs)


def test_a_guess_splits_as_if_every_visible_domain_carried_it_all() -> None:
    caches = RouteCaches(VIEW)
    paths, _ = caches.routes(ROUTE)
    whole = caches.guessed("partial-offers", 4 * G, tuple(paths))
    assert whole is not None and sum(whole) == 4 * G
    halves = caches.guessed("equal-split", 4 * G, tuple(paths))
    assert halves == (2 * G, 2 * G)
    assert caches.guessed("equal-split", 4 * G, tuple(paths)) is halves  # kept


def test_offers_are_learnt_and_forgotten_by_route() -> None:
    caches = RouteCaches(VIEW)
    assert caches.last_offers(ROUTE) is None
    known = ((("site-a", "rn1", "re1", "rn2", "site-c"),), {"re1": Offer("re1", G)})
    caches.learn_offers(ROUTE, known)
    assert caches.last_offers(ROUTE) == known
    assert caches.last_offers(("site-a", "a-dtn", "site-d", "d-dtn", 2)) is None
    caches.learn_offers(ROUTE, None)
    assert caches.last_offers(ROUTE) is None


def test_new_caches_keep_nothing_of_the_old_view() -> None:
    old = RouteCaches(VIEW)
    old.routes(ROUTE)
    old.learn_offers(ROUTE, ((), {}))
    new = RouteCaches(VIEW)
    assert new.last_offers(ROUTE) is None
    assert new.view is VIEW and new.routes(ROUTE) == old.routes(ROUTE)
