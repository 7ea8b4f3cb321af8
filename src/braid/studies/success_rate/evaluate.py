"""Judge one request of the success-rate study under every strategy.

The k participant domains are k independent paths between the two sites
(one domain each), as in seed 000 §6.2; domain i's schedule is row i.

Paper strategies (seed 000 §5.2), composed with `strategies.compose`:

* ``equal-split`` — every domain is blind and asked for b / k;
* ``partial-offers`` — the first k // 2 domains are visible (offer their
  smallest free entry over the window), the others blind;
* ``full-offers`` — every domain offers; success iff the offers sum to b.

braid's own strategies, on the same workload with every domain visible:

* ``max-flow`` — the split may change at each schedule entry: every slot of
  the window is its own max flow over the domains (here, with one domain per
  path, the sum of their free entries), so a dip in one domain is covered by
  another during that slot only;
* ``flex`` — full offers at the earliest start within the user's slack
  (start, start + 1, ..., start + slack, window kept inside the schedule);
* ``flex-max-flow`` — both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from braid.core.negotiation.strategies import (
    Ask,
    Composition,
    DomainPath,
    Offer,
    Strategy,
    compose,
    fill_from_offers,
)
from braid.studies.success_rate.workload import Schedules, SimRequest

PAPER_STRATEGIES: tuple[str, ...] = ("equal-split", "partial-offers", "full-offers")
BRAID_STRATEGIES: tuple[str, ...] = ("max-flow", "flex", "flex-max-flow")
SIM_STRATEGIES: tuple[str, ...] = PAPER_STRATEGIES + BRAID_STRATEGIES

Judge = Callable[[Schedules, SimRequest, int, int], bool]


def domain_names(k: int) -> tuple[str, ...]:
    """The ids of the first k simulated domains."""
    return tuple(f"d{i + 1}" for i in range(k))


def visible_count(strategy: str, k: int) -> int:
    """How many of the k domains give offers under `strategy`."""
    if strategy == "equal-split":
        return 0
    if strategy == "partial-offers":
        return k // 2
    return k


def judge(strategy: str, schedules: Schedules, request: SimRequest, k: int, slack: int) -> bool:
    """Whether `request` is granted over the first `k` domains under `strategy`."""
    return _JUDGES[strategy](schedules, request, k, slack)


def _paper(strategy: Strategy) -> Judge:
    def run(schedules: Schedules, request: SimRequest, k: int, slack: int) -> bool:
        del slack
        return _offers_at(strategy, schedules, request, k, request.start)

    return run


def _offers_at(
    strategy: Strategy, schedules: Schedules, request: SimRequest, k: int, start: int
) -> bool:
    names = domain_names(k)
    window = schedules[:k, start : start + request.duration]
    free = [int(x) for x in window.min(axis=1)]
    visible = visible_count(strategy, k)
    offers = {names[i]: Offer(names[i], free[i]) for i in range(visible)}

    def probe(ask: Ask) -> bool:
        return ask.total <= free[names.index(ask.domain)]

    paths: list[DomainPath] = [(name,) for name in names]
    outcome = compose(strategy, request.bandwidth, paths, offers, probe)
    return isinstance(outcome, Composition)


def _max_flow_at(schedules: Schedules, request: SimRequest, k: int, start: int) -> bool:
    names = domain_names(k)
    paths: Sequence[DomainPath] = [(name,) for name in names]
    for slot in range(start, start + request.duration):
        offers = {names[i]: Offer(names[i], int(schedules[i, slot])) for i in range(k)}
        if sum(fill_from_offers(request.bandwidth, paths, offers, range(k))) < request.bandwidth:
            return False
    return True


def _starts(schedules: Schedules, request: SimRequest, slack: int) -> range:
    last = min(request.start + slack, schedules.shape[1] - request.duration)
    return range(request.start, last + 1)


def _max_flow(schedules: Schedules, request: SimRequest, k: int, slack: int) -> bool:
    del slack
    return _max_flow_at(schedules, request, k, request.start)


def _flex(schedules: Schedules, request: SimRequest, k: int, slack: int) -> bool:
    starts = _starts(schedules, request, slack)
    return any(_offers_at("full-offers", schedules, request, k, t) for t in starts)


def _flex_max_flow(schedules: Schedules, request: SimRequest, k: int, slack: int) -> bool:
    starts = _starts(schedules, request, slack)
    return any(_max_flow_at(schedules, request, k, t) for t in starts)


_JUDGES: dict[str, Judge] = {
    "equal-split": _paper("equal-split"),
    "partial-offers": _paper("partial-offers"),
    "full-offers": _paper("full-offers"),
    "max-flow": _max_flow,
    "flex": _flex,
    "flex-max-flow": _flex_max_flow,
}
