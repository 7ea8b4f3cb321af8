"""Multi-domain reservations for `braid serve`: one way in over the negotiation runtime.

The REST router (and any other front end) calls `InterdomainService`; it
checks the request with errors naming the REST field, remembers who asked
(the negotiation's decision log knows reservations, not users), runs the
negotiation, and turns its result into the REST view. A negotiation blocks
on the network for up to a few agent timeouts, so front ends run it on the
service's own thread pool (`submit`), never on an event loop, and a burst
of negotiations cannot starve the rest of the API's worker threads.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Final, Protocol, TypeVar

from braid.app.errors import NotFoundError, PolicyError, RejectedError
from braid.app.interdomain_volume import (
    VOLUME_FIELDS,
    check_volume,
    check_volume_change,
    is_volume,
    volume_view,
)
from braid.app.negotiation.modification import Modification
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import (
    GRACE_SECONDS,
    NegotiationRequest,
    NegotiationResult,
    check_strategy,
)
from braid.app.negotiation.volume import lookup_volume
from braid.app.records import User
from braid.core.errors import BraidError, InputError
from braid.core.model.instants import format_instant, parse_instant
from braid.core.model.units import parse_bandwidth, to_mbps
from braid.core.policy import Policy, check_booking
from braid.core.rules.enforcement import Policing, parse_policing

T = TypeVar("T")
MAX_PATHS: Final = 8
LIST_LIMIT: Final = 1000
# Far above any link, and within the 64 bits the agents' messages carry.
MAX_BANDWIDTH_BPS: Final = 10**18
# The orchestrator's own field names, as the REST body spells them.
_REST_FIELDS: Final = {
    "source.domain": "src.domain",
    "source.point": "src.point",
    "destination.domain": "dst.domain",
    "destination.point": "dst.point",
    "window.start": "start",
    "window.end": "end",
}
_UNREACHABLE: Final = ("UNAVAILABLE", "DEADLINE_EXCEEDED")


class InterdomainUnavailableError(BraidError):
    """Multi-domain reservations cannot be made now: not configured, or agents not reached."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A negotiation's answer as the REST view, and whether it failed for want of agents."""

    view: dict[str, Any]
    committed: bool
    unreachable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Entry:
    id: str
    owner: str
    created_at: int
    request: dict[str, Any]  # the checked request, REST spelling (instants as ISO 8601)


class OwnerBook(Protocol):
    """Who asked for which multi-domain reservation (the decision log knows no users)."""

    def add(self, entry: Entry) -> None: ...

    def remove(self, reservation: str) -> None: ...

    def get(self, reservation: str) -> Entry | None: ...

    def find(self, owner: str | None, limit: int) -> list[Entry]:
        """Newest first; every owner's when `owner` is None."""
        ...

    def close(self) -> None: ...


class InterdomainService:
    """Reserve, show and list multi-domain reservations on behalf of API users."""

    def __init__(
        self,
        orchestrator: Orchestrator,
        owners: OwnerBook,
        *,
        clock: Callable[[], float] = time.time,
        workers: int = 8,
        on_close: Callable[[], None] | None = None,
        policy: Policy | None = None,
        points: Mapping[str, frozenset[str]] | None = None,
    ) -> None:
        self.orchestrator = orchestrator
        # Each domain's nodes as the topology file names them (the orchestrator's
        # view knows only border points); front ends offer them as endpoints.
        self.points = dict(points or {})
        self.owners = owners
        self.policy = policy or Policy()
        self.clock = clock
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="interdomain")
        self._on_close = on_close

    def submit(self, call: Callable[..., T], *args: Any) -> Future[T]:
        """Run a blocking call of this service on its own threads."""
        return self._pool.submit(call, *args)

    def reserve(self, user: User, body: Mapping[str, Any]) -> Outcome:
        if is_volume(body):
            return self._reserve_volume(user, body, user.tz)
        for only in VOLUME_FIELDS:
            if body.get(only) is not None:
                raise InputError(only, "only with volume (a bandwidth is booked for start-end)")
        request, rest = self.check(body, f"x-{uuid.uuid4().hex[:12]}", zone=user.tz)
        now = int(self.clock())
        self._check_policy(user, request, now)
        # Written before negotiating: a reservation always has its owner, even
        # when the server stops in the middle of the negotiation.
        self.owners.add(Entry(request.id, user.name, now, rest))
        try:
            result = self.orchestrator.reserve(request)
        except InputError as exc:  # refused before negotiating: nothing to remember
            self.owners.remove(request.id)
            raise InputError(_REST_FIELDS.get(exc.field, exc.field), exc.message) from exc
        view = result_view(result, Entry(request.id, user.name, now, rest))
        return Outcome(view, result.success, () if result.success else unreachable_of(result))

    def _reserve_volume(self, user: User, body: Mapping[str, Any], zone: str | None) -> Outcome:
        """A volume by a deadline; the single-domain policy is not checked for volumes
        (it speaks of a bandwidth over a window, which a volume has only once planned)."""
        now = int(self.clock())
        rid = f"x-{uuid.uuid4().hex[:12]}"
        ends, max_paths = self._ends(body), _max_paths(body.get("max_paths"))
        request, rest = check_volume(body, rid, ends, now, max_paths, zone)
        self.owners.add(Entry(request.id, user.name, now, rest))
        try:
            outcome = self.orchestrator.reserve_volume(request)
        except InputError as exc:
            self.owners.remove(request.id)
            raise InputError(_REST_FIELDS.get(exc.field, exc.field), exc.message) from exc
        stored = lookup_volume(self.orchestrator, request.id)
        view = volume_view(stored, request.id, user.name, rest)
        return Outcome(view, outcome.success)

    def _check_policy(self, user: User, request: NegotiationRequest, now: int) -> None:
        """The single-domain rules, endpoints written DOMAIN:POINT; no quotas across domains."""
        limits = replace(self.policy.limits_for(user.name, user.role), quota=None, byte_quota=None)
        broken = check_booking(
            limits,
            src=f"{request.src_domain}:{request.src_point}",
            dst=f"{request.dst_domain}:{request.dst_point}",
            start=request.start,
            end=request.end,
            bandwidth=request.bandwidth,
            now=now,
        )
        if broken is not None:
            raise PolicyError(broken.rule, broken.message)

    def get(self, user: User, reservation: str) -> dict[str, Any]:
        entry = self.owners.get(reservation)
        if entry is None or not _may_see(user, entry):
            raise NotFoundError(f"no multi-domain reservation {reservation!r}")
        return self._view(entry)

    def _view(self, entry: Entry) -> dict[str, Any]:
        if "volume_bytes" in entry.request:
            stored = lookup_volume(self.orchestrator, entry.id)
            return volume_view(stored, entry.id, entry.owner, entry.request)
        return result_view(self.orchestrator.lookup(entry.id), entry)

    def cancel(self, user: User, reservation: str) -> dict[str, Any]:
        """Release a committed reservation in every domain (owner or operator); idempotent:
        a cancelled one answers as it is. A failed one holds nothing and is refused."""
        entry = self.owners.get(reservation)
        if entry is None or not _may_see(user, entry):
            raise NotFoundError(f"no multi-domain reservation {reservation!r}")
        if "volume_bytes" in entry.request:
            return self._cancel_volume(entry)
        result = self.orchestrator.cancel(reservation)
        if result is None:
            raise RejectedError(f"reservation {reservation!r} is still being negotiated")
        if result.state == "failed":
            raise RejectedError(f"reservation {reservation!r} failed: nothing to cancel")
        return result_view(result, entry)

    def _cancel_volume(self, entry: Entry) -> dict[str, Any]:
        stored = self.orchestrator.cancel_volume(entry.id)
        if stored is None:
            raise RejectedError(f"reservation {entry.id!r} is still being negotiated")
        if stored["status"] == "failed":
            raise RejectedError(f"reservation {entry.id!r} failed: nothing to cancel")
        return volume_view(stored, entry.id, entry.owner, entry.request)

    def modify(self, user: User, reservation: str, body: Mapping[str, Any]) -> Outcome:
        """Change bandwidth, window, max_paths or strategy (owner or operator), make-before-
        break: the new version is committed and the old released, or nothing changes."""
        entry = self.owners.get(reservation)
        if entry is None or not _may_see(user, entry):
            raise NotFoundError(f"no multi-domain reservation {reservation!r}")
        if "volume_bytes" in entry.request:
            return self._modify_volume(entry, body, user.tz)
        change = self.check_change(body, entry, zone=user.tz)

        def admit(request: NegotiationRequest) -> None:
            self._check_policy(user, request, int(self.clock()))

        try:
            result = self.orchestrator.modify(reservation, change, admit)
        except InputError as exc:
            raise InputError(_REST_FIELDS.get(exc.field, exc.field), exc.message) from exc
        if result is None:
            raise RejectedError(f"reservation {reservation!r} is still being negotiated")
        view = result_view(result, entry)
        return Outcome(view, result.success, () if result.success else unreachable_of(result))

    def _modify_volume(self, entry: Entry, body: Mapping[str, Any], zone: str | None) -> Outcome:
        """A volume's new volume, deadline or max_rate (app/negotiation/volume_modify)."""
        _same_ends(body, entry)
        change = check_volume_change(body, int(self.clock()), zone)
        outcome = self.orchestrator.modify_volume(entry.id, change)
        stored = lookup_volume(self.orchestrator, entry.id)
        view = volume_view(stored, entry.id, entry.owner, entry.request)
        if outcome is None or outcome.success:
            return Outcome(view, outcome is not None)
        # The old version stands; the refusal says what could move, as booking does.
        earliest = outcome.earliest_completion
        refusal = {
            "reason": outcome.reason,
            "most_by_deadline": outcome.most_by_deadline,
            "earliest_completion": None if earliest is None else format_instant(earliest),
        }
        return Outcome({**view, **refusal}, False)

    def check_change(
        self, body: Mapping[str, Any], entry: Entry, *, zone: str | None = None
    ) -> Modification:
        """A modify's fields (all optional); the end points cannot change. Errors name the field.
        Local times without a zone are read in `zone` (the caller's tz setting)."""
        now = int(self.clock())
        _same_ends(body, entry)
        bandwidth = start = end = None
        if body.get("bandwidth") is not None:
            bandwidth = parse_bandwidth(body["bandwidth"], "bandwidth")
            if bandwidth > MAX_BANDWIDTH_BPS:
                raise InputError("bandwidth", "is far more than any network carries")
        if body.get("start") is not None:
            start = parse_instant(body["start"], "start", zone=zone, now=now)
        if body.get("end") is not None:
            end = parse_instant(body["end"], "end", zone=zone, now=now)
        if start is not None and end is not None and end <= start:
            raise InputError("end", "must be after start")
        strategy = check_strategy(_optional_text(body.get("strategy"), "strategy"))
        max_paths = _max_paths(body.get("max_paths")) or None
        change = Modification(bandwidth, start, end, max_paths, strategy)
        if change.empty():
            raise InputError("body", "nothing to change: give bandwidth, start, end or max_paths")
        return change

    def find(self, user: User, limit: int = 100) -> list[dict[str, Any]]:
        if not 1 <= limit <= LIST_LIMIT:
            raise InputError("limit", f"must be between 1 and {LIST_LIMIT}")
        owner = None if user.role == "operator" else user.name
        views = []
        for entry in self.owners.find(owner, limit):
            view = self._view(entry)
            view.pop("trace", None)
            views.append(view)
        return views

    def check(
        self, body: Mapping[str, Any], rid: str, *, zone: str | None = None
    ) -> tuple[NegotiationRequest, dict[str, Any]]:
        """The negotiation request, and the same in REST spelling; errors name the field.
        Local times without a zone are read in `zone` (the caller's tz setting)."""
        ends = self._ends(body)
        bandwidth = parse_bandwidth(body.get("bandwidth"), "bandwidth")
        if bandwidth > MAX_BANDWIDTH_BPS:
            raise InputError("bandwidth", "is far more than any network carries")
        now = int(self.clock())
        start = parse_instant(body.get("start"), "start", zone=zone, now=now)
        end = parse_instant(body.get("end"), "end", zone=zone, now=now)
        if end <= start:
            raise InputError("end", "must be after start")
        if start < now - GRACE_SECONDS:
            raise InputError("start", "is in the past")
        strategy = check_strategy(_optional_text(body.get("strategy"), "strategy"))
        max_paths = _max_paths(body.get("max_paths"))
        policing = parse_policing(body.get("policing", Policing.SOFT.value))
        request = NegotiationRequest(
            rid, *ends["src"], *ends["dst"], bandwidth, start, end, strategy, max_paths,
            policing=policing,
        )  # fmt: skip
        rest = {
            "src": {"domain": ends["src"][0], "point": ends["src"][1]},
            "dst": {"domain": ends["dst"][0], "point": ends["dst"][1]},
            "bandwidth": to_mbps(bandwidth),
            "start": format_instant(start),
            "end": format_instant(end),
            "strategy": strategy or self.orchestrator.config.strategy,
            "max_paths": max_paths or self.orchestrator.config.max_paths,
            "policing": policing.value,
        }
        return request, rest

    def _ends(self, body: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
        """The two site points, checked against the domain graph; errors name the field."""
        view = self.orchestrator.view
        ends: dict[str, tuple[str, str]] = {}
        for side in ("src", "dst"):
            given = body.get(side)
            if not isinstance(given, Mapping):
                raise InputError(side, "expected an object {domain, point}")
            domain = _text(given.get("domain"), f"{side}.domain")
            spec = view.domains.get(domain)
            if spec is None:
                known = ", ".join(sorted(d for d, s in view.domains.items() if s.kind == "site"))
                raise InputError(f"{side}.domain", f"unknown domain {domain!r}; sites: {known}")
            if spec.kind != "site":
                raise InputError(f"{side}.domain", f"{domain!r} is a {spec.kind}, not a site")
            ends[side] = (domain, _text(given.get("point"), f"{side}.point"))
        if ends["src"][0] == ends["dst"][0]:
            raise InputError("dst.domain", "must be another site than src.domain")
        return ends

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.owners.close()
        if self._on_close is not None:
            self._on_close()


def unreachable_of(result: NegotiationResult) -> tuple[str, ...]:
    """The domains whose agents gave no answer at all (down or too slow)."""
    found: list[str] = []
    for event in result.trace:
        down = event.phase in ("offers", "prep") and any(s in event.text for s in _UNREACHABLE)
        if down and event.domain not in found:
            found.append(event.domain)
    return tuple(found)


def result_view(result: NegotiationResult | None, entry: Entry) -> dict[str, Any]:
    """The REST view: the request, the outcome, paths, per-domain amounts, VLANs, rule plan."""
    if result is None:  # the owner is written first: the negotiation is still under way
        return {"id": entry.id, "owner": entry.owner, "status": "negotiating", **entry.request}
    per_domain: dict[str, int] = {}
    for path in result.paths:
        for domain in dict.fromkeys(path.domains()):
            per_domain[domain] = per_domain.get(domain, 0) + path.bandwidth
    return {
        "id": entry.id,
        "owner": entry.owner,
        "created_at": format_instant(entry.created_at),
        **_asked(result, entry),
        "status": result.state,
        "reason": result.reason,
        "strategy": result.strategy or entry.request.get("strategy"),
        "transaction": result.transaction,
        "granted": to_mbps(result.granted),
        "paths": [_path_view(path) for path in result.paths],
        "domains": {d: to_mbps(bps) for d, bps in per_domain.items()},
        "switches": [_switch_view(sw) for sw in result.to_dict()["switches"]],
        "holdings": dict(result.holdings),
        "trace": [event.line() for event in result.trace],
    }


def _asked(result: NegotiationResult, entry: Entry) -> dict[str, Any]:
    """The request in REST spelling: as the reservation's current version asked (a modify
    changes it; it is kept with the decision), else as first checked."""
    out = dict(entry.request)
    asked = result.request
    if asked is not None:
        out["bandwidth"] = to_mbps(asked.bandwidth)
        out["start"] = format_instant(asked.start)
        out["end"] = format_instant(asked.end)
        out["max_paths"] = asked.max_paths or out.get("max_paths")
        out["strategy"] = asked.strategy or out.get("strategy")
    return out


def _path_view(path: Any) -> dict[str, Any]:
    return {
        "domains": list(path.domains()),
        "legs": [{"domain": g.domain, "entry": g.entry, "exit": g.exit} for g in path.legs],
        "bandwidth": to_mbps(path.bandwidth),
        "vlans": [{"link": link, "vlan": vlan} for link, vlan in path.vlans],
    }


def _rate(way: Sequence[int]) -> float | None:
    """A way's rate in Mbit/s; None in a plan kept from before ways had rates."""
    return to_mbps(way[3]) if len(way) > 3 and way[3] else None


def _switch_view(sw: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "domain": sw["domain"],
        "switch": sw["switch"],
        "dpid": sw["dpid"],
        "rules": [
            {
                "in_port": port,
                "vlan": vlan,
                "out": [
                    {"port": way[0], "vlan": way[1], "weight": way[2], "rate": _rate(way)}
                    for way in ways
                ],
            }
            for port, vlan, ways in sw["rules"]
        ],
        "policing": sw.get("policing"),
    }


def _same_ends(body: Mapping[str, Any], entry: Entry) -> None:
    """A modify may repeat the end points, never change them."""
    for side in ("src", "dst"):
        if side in body and body[side] != entry.request.get(side):
            raise InputError(side, "cannot be changed by a modify; cancel and reserve anew")


def _may_see(user: User, entry: Entry) -> bool:
    return user.role == "operator" or entry.owner == user.name


def _text(value: object, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(field, "missing; give a non-empty string")
    return value.strip()


def _optional_text(value: object, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(field, "expected a string")
    return value


def _max_paths(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PATHS:
        raise InputError("max_paths", f"must be a whole number from 1 to {MAX_PATHS}")
    return value
