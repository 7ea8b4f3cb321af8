"""Who may negotiate with a domain's agent, and within which limits (pure).

An agent's operator lists its peers — the orchestrators it deals with — each
known by the names its client certificate carries (common name or a subject
alternative name, with mutual TLS) or by a bearer token (without TLS). Per
peer: whether it may reserve at all, and the booking rules of `core.policy`
that make sense between domains (`horizon`, `max_duration`,
`max_bandwidth`), plus the VLANs it may be given on each border link this
domain owns. Every refusal names its rule, so the orchestrator can tell the
user which domain refused and why.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from braid.core.errors import InputError
from braid.core.model.vlans import VlanSpans, format_vlan_spans, parse_vlan_spans
from braid.core.negotiation.domains import VlanRange
from braid.core.policy import Limits, Violation, check_booking, limits_from_dict

__all__ = [
    "PEER_KEYS",
    "PEER_RULES",
    "Peer",
    "PeerPolicy",
    "check_offer",
    "check_prep",
    "check_vlan_links",
    "identify",
    "peer_policy_from_dict",
]

# The rules a refusal may name; `peers` is "not a known peer at all".
PEER_RULES = ("peers", "allowed", "horizon", "max_duration", "max_bandwidth", "vlans")
# The booking rules shared with `braid serve`'s policy (core.policy), parsed by it.
_BOOKING_RULES = ("horizon", "max_duration", "max_bandwidth")
PEER_KEYS = ("subjects", "token_file", "allowed", *_BOOKING_RULES, "vlans")
MIN_TOKEN = 16


@dataclass(frozen=True, slots=True)
class Peer:
    """One orchestrator this agent deals with. `vlans`: per owned border link, the VLANs
    it may be given (a link it does not name: the link's whole range)."""

    name: str
    subjects: frozenset[str] = frozenset()
    token: str | None = None
    allowed: bool = True
    limits: Limits = field(default_factory=Limits)
    vlans: Mapping[str, VlanSpans] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PeerPolicy:
    peers: Mapping[str, Peer] = field(default_factory=dict)


def identify(policy: PeerPolicy, subjects: Sequence[str], token: str | None) -> Peer | Violation:
    """The peer named by a certificate's names or by a bearer token, or why none is.

    A certificate decides when it names a peer; otherwise the token must match
    one (compared in constant time: a wrong guess tells nothing of the right one).
    """
    for peer in policy.peers.values():
        if peer.subjects.intersection(subjects):
            return peer
    if token:
        for peer in policy.peers.values():
            if peer.token is not None and hmac.compare_digest(peer.token.encode(), token.encode()):
                return peer
    if subjects:
        names = ", ".join(sorted(subjects))
        return Violation("peers", f"the client certificate ({names}) names no known peer")
    if token:
        return Violation("peers", "the bearer token belongs to no known peer")
    return Violation("peers", "no client certificate or bearer token names a known peer")


def check_offer(peer: Peer, start: int, end: int, now: int) -> Violation | None:
    """Whether `peer` may be offered anything for [start, end): every rule but the amount
    (an offer is what the domain could carry; the amount is checked at Prep)."""
    return check_prep(peer, start, end, 0, now)


def check_prep(peer: Peer, start: int, end: int, bandwidth: int, now: int) -> Violation | None:
    """The first rule a hold of `bandwidth` (all segments together) over [start, end)
    breaks for `peer`, or None."""
    if not peer.allowed:
        return Violation("allowed", f"peer {peer.name} may not reserve in this domain")
    found = check_booking(
        peer.limits, src="", dst="", start=start, end=end, bandwidth=bandwidth, now=now
    )
    if found is None:
        return None
    return Violation(found.rule, f"{found.message} for peer {peer.name}")


def check_vlan_links(
    policy: PeerPolicy, owned: Mapping[str, VlanRange], where: str = "peers"
) -> None:
    """Every VLAN range of the policy is on a border link this domain owns, within its range."""
    for name, peer in policy.peers.items():
        for link, spans in peer.vlans.items():
            path = f"{where}.{name}.vlans.{link}"
            if link not in owned:
                known = ", ".join(sorted(owned)) or "none"
                raise InputError(path, f"not a border link this domain owns (owned: {known})")
            low, high = owned[link].low, owned[link].high
            if spans[0][0] < low or spans[-1][1] > high:
                raise InputError(
                    path, f"{format_vlan_spans(spans)} is outside the link's range {low}-{high}"
                )


def peer_policy_from_dict(
    data: object, read_token: Callable[[str, str], str], where: str = "peers"
) -> PeerPolicy:
    """Parse `{PEER: {subjects, token_file, allowed, horizon, max_duration, max_bandwidth,
    vlans}}`. `read_token(path, field)` reads a token file (the caller does the I/O).
    Errors name the field (`peers.east.max_bandwidth`)."""
    entries = _mapping(data, where)
    if not entries:
        raise InputError(where, "names no peer (leave --policy out for an open agent)")
    peers = {
        str(name): _peer(str(name), value, read_token, f"{where}.{name}")
        for name, value in entries.items()
    }
    seen: dict[str, str] = {}
    for name, peer in peers.items():
        for subject in peer.subjects:
            if subject in seen:
                raise InputError(
                    f"{where}.{name}.subjects", f"{subject!r} already names peer {seen[subject]}"
                )
            seen[subject] = name
    tokens = [p.token for p in peers.values() if p.token is not None]
    if len(set(tokens)) != len(tokens):
        raise InputError(where, "two peers share one bearer token")
    return PeerPolicy(peers)


def _peer(name: str, value: object, read_token: Callable[[str, str], str], where: str) -> Peer:
    entry = _mapping(value or {}, where)
    unknown = sorted(set(entry) - set(PEER_KEYS))
    if unknown:
        raise InputError(f"{where}.{unknown[0]}", f"unknown key; known: {', '.join(PEER_KEYS)}")
    subjects = _subjects(entry.get("subjects"), f"{where}.subjects")
    token = None
    if entry.get("token_file") is not None:
        token = _token(read_token, entry["token_file"], f"{where}.token_file")
    if not subjects and token is None:
        raise InputError(where, "needs subjects (mutual TLS) or token_file (bearer token)")
    allowed = entry.get("allowed", True)
    if not isinstance(allowed, bool):
        raise InputError(f"{where}.allowed", f"must be true or false, got {allowed!r}")
    booking = {rule: entry[rule] for rule in _BOOKING_RULES if entry.get(rule) is not None}
    limits = limits_from_dict(booking, where)
    vlans = _vlans(entry.get("vlans"), f"{where}.vlans")
    return Peer(name, subjects, token, allowed, limits, vlans)


def _subjects(value: object, where: str) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(s, str) and s for s in value):
        raise InputError(where, "must be a list of certificate names (CN or SAN)")
    return frozenset(value)


def _token(read_token: Callable[[str, str], str], path: object, where: str) -> str:
    if not isinstance(path, str) or not path:
        raise InputError(where, "must be the path of a file holding the token")
    token = read_token(path, where).strip()
    if len(token) < MIN_TOKEN or any(c.isspace() for c in token):
        raise InputError(where, f"the token must be one word of at least {MIN_TOKEN} characters")
    return token


def _vlans(value: object, where: str) -> dict[str, VlanSpans]:
    if value is None:
        return {}
    links = _mapping(value, where)
    return {str(link): parse_vlan_spans(spans, f"{where}.{link}") for link, spans in links.items()}


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(where, "must be a mapping")
    return value
