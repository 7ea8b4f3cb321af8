"""What the orchestrator keeps between negotiations on one domain graph.

Requests repeat their shape: the same end points, the same split, the same
VLANs. `RouteCaches` keeps, for one view, the candidate domain paths and
their legs of each pair of end points, the split a strategy guesses for a
shape, the offers of the last committed negotiation on each route (the
guess's gate) and the summarised rule plans. A new view gets new caches, so
nothing kept is ever stale; each is bounded and cleared when full.
"""

from __future__ import annotations

import threading

from braid.core.negotiation.domain_paths import domain_paths
from braid.core.negotiation.domains import GlobalView
from braid.core.negotiation.result_rules import (
    CommittedPath,
    SwitchPlan,
    committed_rule_plan,
    summarise,
)
from braid.core.negotiation.routes import Leg, domain_pairs, route_legs
from braid.core.negotiation.strategies import Offer, Refusal, Strategy, compose
from braid.core.negotiation.way_rates import with_way_rates
from braid.core.rules.enforcement import Policing

__all__ = ["RouteCaches", "RouteKey", "RouteOffers"]

_ROUTES_KEPT = 4096
_PLANS_KEPT = 4096
# An offer no request reaches: a guess assumes every visible domain carries it all.
_UNBOUNDED = 2**62
# A route: its end points (domain and point each) and how many paths it may take.
RouteKey = tuple[str, str, str, str, int]
# A route's candidate domain paths and the offers a negotiation on them got.
RouteOffers = tuple[tuple[tuple[str, ...], ...], dict[str, Offer]]
Routes = tuple[list[tuple[str, ...]], tuple[tuple[Leg, ...], ...]]
GuessKey = tuple[Strategy, int, tuple[tuple[str, ...], ...]]
# A rule plan's summary depends only on the view and on each path's domains, share
# and VLANs (not on the reservation: its cookie and group ids are not summarised).
PlanKey = tuple[str, tuple[tuple[tuple[str, ...], int, tuple[tuple[str, int], ...]], ...]]


class RouteCaches:
    """The orchestrator's guesses and memos on `view`; safe to use from many threads."""

    def __init__(self, view: GlobalView) -> None:
        self.view = view
        self.kinds = {d: spec.kind for d, spec in view.domains.items()}
        self.pairs = domain_pairs(view)
        self._routes: dict[RouteKey, Routes] = {}
        self._plans: dict[PlanKey, tuple[SwitchPlan, ...]] = {}
        # What the last committed negotiation on each route was offered (the guess's gate).
        self._committed_offers: dict[RouteKey, RouteOffers] = {}
        self._guesses: dict[GuessKey, tuple[int, ...] | None] = {}
        self._lock = threading.Lock()

    def routes(self, route: RouteKey) -> Routes:
        """The candidate domain paths of `route` (src, src point, dst, dst point, k) and
        their legs; kept (a bounded number of end-point pairs) instead of found again."""
        routes = self._routes
        known = routes.get(route)
        if known is None:
            src, src_point, dst, dst_point, k = route
            paths = domain_paths(self.kinds, self.pairs, src, dst, k)
            legs = tuple(route_legs(self.view, p, src_point, dst_point) for p in paths)
            known = (list(paths), legs)
            if len(routes) >= _ROUTES_KEPT:
                routes.clear()
            routes[route] = known
        return list(known[0]), known[1]

    def guessed(
        self, strategy: Strategy, bandwidth: int, paths: tuple[tuple[str, ...], ...]
    ) -> tuple[int, ...] | None:
        """The split `strategy` composes over `paths` if every visible domain can carry
        all of `bandwidth` and every blind one says yes (None if it refuses even so);
        kept, since requests repeat their shape."""
        key = (strategy, bandwidth, paths)
        with self._lock:
            if key in self._guesses:
                return self._guesses[key]
        domains = self.view.domains
        visible = {d for path in paths for d in path if domains[d].visible}
        unbounded = {} if strategy == "equal-split" else {d: Offer(d, _UNBOUNDED) for d in visible}
        outcome = compose(strategy, bandwidth, paths, unbounded, lambda ask: True)
        amounts = None if isinstance(outcome, Refusal) else outcome.path_amounts
        with self._lock:
            if len(self._guesses) >= _ROUTES_KEPT:
                self._guesses.clear()
            self._guesses[key] = amounts
        return amounts

    def last_offers(self, route: RouteKey) -> RouteOffers | None:
        """The candidate paths and the offers of the last negotiation on `route` that
        committed (None since a refusal or a wrong guess there, or if none has)."""
        with self._lock:
            return self._committed_offers.get(route)

    def learn_offers(self, route: RouteKey, known: RouteOffers | None) -> None:
        """Remember (or, with None, forget) what a negotiation on `route` was offered."""
        with self._lock:
            if known is None:
                self._committed_offers.pop(route, None)
                return
            if len(self._committed_offers) >= _ROUTES_KEPT:
                self._committed_offers.clear()
            self._committed_offers[route] = known

    def rule_plan(
        self, reservation: str, paths: list[CommittedPath], policing: Policing = Policing.SOFT
    ) -> tuple[SwitchPlan, ...]:
        """The committed split's SDX/edge rules in short; raises InputError when it has none.

        Kept (a bounded number): reservations between the same sites over the same
        VLANs have the same plan, and building it (OpenFlow rules, then their
        summary) is a good part of an orchestrator's CPU per reservation.
        """
        memo = self._plans
        key = (
            policing.value,
            tuple((p.domains, p.bandwidth, tuple(sorted(p.vlans.items()))) for p in paths),
        )
        known = memo.get(key)
        if known is None:
            summary = summarise(committed_rule_plan(self.view, reservation, paths), self.view)
            known = with_way_rates(summary, self.view, paths, policing)
            if len(memo) >= _PLANS_KEPT:
                memo.clear()
            memo[key] = known
        return known
