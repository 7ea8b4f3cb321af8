"""Compose one end-to-end reservation out of per-domain answers (seed 000 §4.2, §5.2).

Pure: the caller gathers the offers of the *visible* domains beforehand and
hands in a `Probe` that answers yes or no for a *blind* domain (a local
schedule in the simulation, a ReservationPrep over gRPC in the orchestrator).
Nothing here does I/O or reads a clock.

Model
-----
* `paths` are the candidate domain-level paths, each an ordered tuple of
  domain ids (see `domain_paths.domain_paths`); a path is referred to by its
  index in that sequence.
* A path's bandwidth is the minimum over its domains; a domain on several
  paths must carry the sum of their amounts.
* A visible domain's `Offer` gives the most it can carry over the window in
  total (all its paths together), and optionally a tighter cap per path index
  (the offer between the two border points that path uses).
* A blind domain is any domain of `paths` without an offer. It is only ever
  asked a concrete question: an `Ask` with its amount per path.

Strategies (`compose`)
----------------------
* ``equal-split`` (no visibility): b is split equally over the k paths (the
  remainder, one bit/s each, goes to the first paths); every domain is asked
  for its sum, visible ones included (the probe decides how). Stops at the
  first no.
* ``partial-offers``: paths made only of visible domains are filled first
  from the offers; what is left is split equally over the paths that cross a
  blind domain, and those blind domains are asked for it.
* ``full-offers``: every domain must be visible; the split is composed from
  the offers alone, no question asked.

All three return a `Composition` (per-path and per-domain amounts) or a
`Refusal` with its reason. Both carry the `answers` given by blind domains:
in the orchestrator a yes is a hold, which the caller must abort when the
composition is refused or does not use it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from braid.core.errors import InputError
from braid.core.model.units import format_bandwidth

DomainPath = tuple[str, ...]
Strategy = Literal["equal-split", "partial-offers", "full-offers"]
STRATEGIES: tuple[Strategy, ...] = ("equal-split", "partial-offers", "full-offers")


@dataclass(frozen=True, slots=True)
class Offer:
    """What a visible domain can carry over the window, in bit/s.

    `bandwidth` bounds the sum over every path through the domain;
    `per_path` (path index -> bit/s) optionally bounds single paths further,
    e.g. when the domain offered per border pair.
    """

    domain: str
    bandwidth: int
    per_path: Mapping[int, int] = field(default_factory=dict)

    def cap(self, path: int) -> int:
        """The most this domain can carry on path `path` alone."""
        return min(self.bandwidth, self.per_path.get(path, self.bandwidth))


@dataclass(frozen=True, slots=True)
class Ask:
    """A concrete question to one domain: carry these amounts (path index, bit/s)?"""

    domain: str
    per_path: tuple[tuple[int, int], ...]

    @property
    def total(self) -> int:
        """The sum the domain must carry."""
        return sum(amount for _, amount in self.per_path)


@dataclass(frozen=True, slots=True)
class Answer:
    """A domain's reply to an `Ask`."""

    ask: Ask
    accepted: bool


Probe = Callable[[Ask], bool]
"""Yes/no for a concrete amount; the caller's bridge to a blind domain."""


@dataclass(frozen=True, slots=True)
class Composition:
    """A composed reservation: amount per candidate path (0 = unused) and per domain."""

    strategy: Strategy
    requested: int
    path_amounts: tuple[int, ...]
    domain_amounts: Mapping[str, int]
    answers: tuple[Answer, ...] = ()

    @property
    def granted(self) -> int:
        """The bandwidth composed; equals `requested` (the split is exact)."""
        return sum(self.path_amounts)


@dataclass(frozen=True, slots=True)
class Refusal:
    """No composition: why, and the answers obtained on the way (abort the yeses)."""

    strategy: Strategy
    requested: int
    reason: str
    answers: tuple[Answer, ...] = ()


Outcome = Composition | Refusal


def compose(
    strategy: Strategy,
    request: int,
    paths: Sequence[DomainPath],
    offers: Mapping[str, Offer],
    probe: Probe | None = None,
) -> Outcome:
    """Compose `request` bit/s over `paths` with `strategy` (the front function).

    `offers` holds the visible domains (keyed by domain id); every other
    domain on `paths` is blind and reached through `probe`. Raises
    `InputError` naming the field on malformed input; a request that cannot
    be met is a `Refusal`, not an error.
    """
    _check(strategy, request, paths, offers)
    if strategy == "equal-split":
        return _equal_split(request, paths, offers, _need_probe(strategy, probe))
    if strategy == "full-offers":
        return _full_offers(request, paths, offers)
    return _partial_offers(request, paths, offers, probe)


def domain_amounts(paths: Sequence[DomainPath], amounts: Sequence[int]) -> dict[str, int]:
    """What each domain carries for per-path `amounts` (domains with 0 left out)."""
    carried: dict[str, int] = {}
    for path, amount in zip(paths, amounts, strict=True):
        if amount <= 0:
            continue
        for domain in path:
            carried[domain] = carried.get(domain, 0) + amount
    return carried


def equal_amounts(request: int, count: int) -> tuple[int, ...]:
    """`request` in `count` integer parts differing by at most 1, larger ones first."""
    base, extra = divmod(request, count)
    return tuple(base + (1 if i < extra else 0) for i in range(count))


def fits_offers(
    paths: Sequence[DomainPath], amounts: Sequence[int], offers: Mapping[str, Offer]
) -> bool:
    """Whether the visible domains' offers allow `amounts` (blind domains ignored)."""
    for index, (path, amount) in enumerate(zip(paths, amounts, strict=True)):
        if amount > 0 and any(d in offers and amount > offers[d].cap(index) for d in path):
            return False
    carried = domain_amounts(paths, amounts)
    return all(carried[d] <= offers[d].bandwidth for d in carried if d in offers)


def offer_probe(offers: Mapping[str, Offer], blind: Probe | None = None) -> Probe:
    """A probe answering visible domains from their offers and the rest with `blind`.

    Useful for equal splitting when some domains are visible; with no `blind`
    probe an unknown domain answers no.
    """

    def answer(ask: Ask) -> bool:
        offer = offers.get(ask.domain)
        if offer is None:
            return blind(ask) if blind is not None else False
        per_path_ok = all(amount <= offer.cap(path) for path, amount in ask.per_path)
        return per_path_ok and ask.total <= offer.bandwidth

    return answer


# -- strategies --------------------------------------------------------------


def _equal_split(
    request: int, paths: Sequence[DomainPath], offers: Mapping[str, Offer], probe: Probe
) -> Outcome:
    del offers  # equal splitting asks every domain, visible or not
    amounts = equal_amounts(request, len(paths))
    answers = _ask_all(paths, amounts, _domains_in_order(paths), probe)
    refused = [a.ask.domain for a in answers if not a.accepted]
    if refused:
        return Refusal(
            "equal-split",
            request,
            f"domain {refused[0]} refused {format_bandwidth(answers[-1].ask.total)}",
            answers,
        )
    return Composition("equal-split", request, amounts, domain_amounts(paths, amounts), answers)


def _full_offers(request: int, paths: Sequence[DomainPath], offers: Mapping[str, Offer]) -> Outcome:
    blind = [d for d in _domains_in_order(paths) if d not in offers]
    if blind:
        return Refusal("full-offers", request, f"domain {blind[0]} gives no offer (blind)")
    amounts = fill_from_offers(request, paths, offers, range(len(paths)))
    if sum(amounts) < request:
        return Refusal(
            "full-offers",
            request,
            f"offers compose only {format_bandwidth(sum(amounts))} of {format_bandwidth(request)}",
        )
    return Composition("full-offers", request, amounts, domain_amounts(paths, amounts))


def _partial_offers(
    request: int, paths: Sequence[DomainPath], offers: Mapping[str, Offer], probe: Probe | None
) -> Outcome:
    visible = [i for i, path in enumerate(paths) if all(d in offers for d in path)]
    mixed = [i for i in range(len(paths)) if i not in visible]
    amounts = list(fill_from_offers(request, paths, offers, visible))
    rest = request - sum(amounts)
    if rest == 0:
        return Composition(
            "partial-offers", request, tuple(amounts), domain_amounts(paths, amounts)
        )
    if not mixed:
        return Refusal(
            "partial-offers",
            request,
            f"offers compose only {format_bandwidth(request - rest)} of "
            f"{format_bandwidth(request)} and no path crosses a blind domain",
        )
    for index, share in zip(mixed, equal_amounts(rest, len(mixed)), strict=True):
        amounts[index] = share
    if not fits_offers(paths, amounts, offers):
        return Refusal(
            "partial-offers",
            request,
            f"the remaining {format_bandwidth(rest)} does not fit the visible domains' offers",
        )
    blind = [d for d in _domains_in_order([paths[i] for i in mixed]) if d not in offers]
    answers = _ask_all(paths, amounts, blind, _need_probe("partial-offers", probe))
    refused = [a.ask.domain for a in answers if not a.accepted]
    if refused:
        reason = f"blind domain {refused[0]} refused {format_bandwidth(answers[-1].ask.total)}"
        return Refusal("partial-offers", request, reason, answers)
    final = tuple(amounts)
    return Composition("partial-offers", request, final, domain_amounts(paths, final), answers)


# -- filling from offers ------------------------------------------------------


def fill_from_offers(
    request: int,
    paths: Sequence[DomainPath],
    offers: Mapping[str, Offer],
    usable: Sequence[int] | range,
) -> tuple[int, ...]:
    """Per-path amounts (at most `request` in total) that the offers allow on `usable` paths.

    Tries three splits and keeps the first that meets the request, else the
    largest: water-filling (raise every path together, freeze a path when
    one of its domains is full, then top up in order) — balanced tunnels,
    which seed 000 Fig. 8c shows carry TCP best; the equal split; and a
    greedy fill in path order. Water-filling never does worse than the equal
    split, and keeping the best of three makes full offers succeed whenever
    equal splitting would.
    """
    count = len(paths)
    if not usable:
        return (0,) * count
    candidates = [
        _water_fill(request, paths, offers, usable),
        _spread(count, usable, equal_amounts(request, len(usable))),
        _greedy(request, paths, offers, usable, [0] * count),
    ]
    feasible = [c for c in candidates if fits_offers(paths, c, offers)]
    return max(feasible, key=lambda c: (min(sum(c), request) == request, sum(c)))


def _spread(count: int, usable: Sequence[int] | range, parts: Sequence[int]) -> tuple[int, ...]:
    amounts = [0] * count
    for index, part in zip(usable, parts, strict=True):
        amounts[index] = part
    return tuple(amounts)


def _water_fill(
    request: int,
    paths: Sequence[DomainPath],
    offers: Mapping[str, Offer],
    usable: Sequence[int] | range,
) -> tuple[int, ...]:
    amounts = [0] * len(paths)
    active = list(usable)
    while sum(amounts) < request:
        active = [i for i in active if _headroom(i, paths, offers, amounts, active) > 0]
        if not active:
            break
        rooms = [_headroom(i, paths, offers, amounts, active) for i in active]
        step = min((request - sum(amounts)) // len(active), *rooms)
        if step <= 0:
            break
        for i in active:
            amounts[i] += step
    return _greedy(request, paths, offers, usable, amounts)


def _headroom(
    index: int,
    paths: Sequence[DomainPath],
    offers: Mapping[str, Offer],
    amounts: Sequence[int],
    active: Sequence[int],
) -> int:
    """How much path `index` may still rise if every active path rises with it."""
    carried = domain_amounts(paths, amounts)
    room = []
    for domain in paths[index]:
        offer = offers[domain]
        sharing = sum(1 for j in active if domain in paths[j])
        left = offer.bandwidth - carried.get(domain, 0)
        room.append(min(offer.cap(index) - amounts[index], left // sharing))
    return min(room)


def _greedy(
    request: int,
    paths: Sequence[DomainPath],
    offers: Mapping[str, Offer],
    usable: Sequence[int] | range,
    start: Sequence[int],
) -> tuple[int, ...]:
    amounts = list(start)
    for index in usable:
        need = request - sum(amounts)
        if need <= 0:
            break
        carried = domain_amounts(paths, amounts)
        room = min(
            min(offers[d].cap(index) - amounts[index], offers[d].bandwidth - carried.get(d, 0))
            for d in paths[index]
        )
        amounts[index] += max(0, min(need, room))
    return tuple(amounts)


# -- helpers -------------------------------------------------------------------


def _ask_all(
    paths: Sequence[DomainPath], amounts: Sequence[int], domains: Sequence[str], probe: Probe
) -> tuple[Answer, ...]:
    answers: list[Answer] = []
    for domain in domains:
        per_path = tuple(
            (i, amounts[i]) for i, path in enumerate(paths) if domain in path and amounts[i] > 0
        )
        if not per_path:
            continue
        ask = Ask(domain, per_path)
        answers.append(Answer(ask, bool(probe(ask))))
        if not answers[-1].accepted:
            break
    return tuple(answers)


def _domains_in_order(paths: Sequence[DomainPath]) -> list[str]:
    return list(dict.fromkeys(d for path in paths for d in path))


def _need_probe(strategy: Strategy, probe: Probe | None) -> Probe:
    if probe is None:
        raise InputError("probe", f"{strategy} must ask blind domains: give a probe")
    return probe


def _check(
    strategy: str, request: int, paths: Sequence[DomainPath], offers: Mapping[str, Offer]
) -> None:
    if strategy not in STRATEGIES:
        raise InputError(
            "strategy", f"unknown strategy {strategy!r}; one of {', '.join(STRATEGIES)}"
        )
    if isinstance(request, bool) or not isinstance(request, int) or request <= 0:
        raise InputError("bandwidth", f"must be a positive integer bit/s, got {request!r}")
    if not paths:
        raise InputError("paths", "no candidate domain path")
    for i, path in enumerate(paths):
        if not path:
            raise InputError(f"paths[{i}]", "empty domain path")
        if len(set(path)) != len(path):
            raise InputError(f"paths[{i}]", f"domain path {'-'.join(path)} is not simple")
    for domain, offer in offers.items():
        if offer.domain != domain:
            raise InputError(f"offers[{domain}]", f"offer names domain {offer.domain!r}")
        values = [offer.bandwidth, *offer.per_path.values()]
        if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in values):
            raise InputError(f"offers[{domain}]", "bandwidth must be a non-negative integer bit/s")
        bad = [p for p in offer.per_path if not 0 <= p < len(paths)]
        if bad:
            raise InputError(f"offers[{domain}].per_path", f"no candidate path {bad[0]}")
