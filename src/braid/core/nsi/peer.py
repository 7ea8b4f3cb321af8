"""An NSI provider taking part in braid's negotiations as a blind domain (pure).

A domain of kind `nsi` in the orchestrator's topology file is not run by a
braid agent but by an NSI CS 2.0 provider (OpenNSA, OSCARS, …). Its entry
says where the provider answers, its NSA id, and which of the provider's STPs
each of the domain's border nodes is:

    - id: nordu
      kind: nsi
      nsi:
        provider: https://nsa.example.net/NSI/services/CS2
        nsa: urn:ogf:network:example.net:nsa
        stps:
          nordu-ams: urn:ogf:network:example.net:topology:ams
          nordu-cph: urn:ogf:network:example.net:topology:cph

The VLANs come from the border links' `vlans`: the NSI domain owns every link
at its border, since only its provider can pick the VLAN it will hand off on
(braid asks it for the link's range and reads back the one it chose).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from braid.core.errors import TopologyError

__all__ = [
    "DEFAULT_REQUESTER",
    "BorderEnd",
    "NsiPeer",
    "SegmentStps",
    "parse_nsi_peer",
    "segment_stps",
    "vlan_of",
]

DEFAULT_REQUESTER: Final = "urn:ogf:network:braid.orchestrator:nsa"
_URN: Final = re.compile(r"^urn:ogf:network:[^?\s]+$")
_URL: Final = re.compile(r"^https?://[^\s/]+(/\S*)?$")
_KEYS: Final = frozenset({"provider", "nsa", "requester", "stps", "timeout"})


@dataclass(frozen=True, slots=True)
class NsiPeer:
    """Where and as whom braid reaches one NSI domain's provider."""

    provider: str  # the provider's CS 2.0 SOAP endpoint
    nsa: str  # its NSA id (providerNSA)
    stps: Mapping[str, str]  # braid node -> the provider's STP id (without labels)
    requester: str = DEFAULT_REQUESTER  # braid's NSA id towards it
    timeout: float = 20.0  # seconds a reserve may take to be held, a commit to end


def parse_nsi_peer(value: object, field: str) -> NsiPeer:
    """The `nsi` part of a domain entry; TopologyError names the field at fault."""
    if not isinstance(value, Mapping):
        raise TopologyError(
            field, "a domain of kind nsi needs an 'nsi' mapping (provider, nsa, stps)"
        )
    unknown = sorted(set(value) - _KEYS)
    if unknown:
        raise TopologyError(
            f"{field}.{unknown[0]}", f"unknown key; known: {', '.join(sorted(_KEYS))}"
        )
    provider = value.get("provider")
    if not isinstance(provider, str) or not _URL.match(provider):
        raise TopologyError(f"{field}.provider", f"must be an http(s) URL, got {provider!r}")
    for key in ("nsa", "requester"):
        urn = value.get(key, DEFAULT_REQUESTER)
        if not isinstance(urn, str) or not _URN.match(urn):
            raise TopologyError(
                f"{field}.{key}", f"must be an NSA id urn:ogf:network:…, got {urn!r}"
            )
    timeout = value.get("timeout", 20.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 600:
        raise TopologyError(f"{field}.timeout", f"must be seconds in (0, 600], got {timeout!r}")
    stps = _stps(value.get("stps"), f"{field}.stps")
    requester = str(value.get("requester", DEFAULT_REQUESTER))
    return NsiPeer(provider, str(value["nsa"]), stps, requester, float(timeout))


def _stps(value: object, field: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not value:
        raise TopologyError(field, "must map each border node to its STP, e.g. {p1: urn:ogf:…}")
    out: dict[str, str] = {}
    for node, stp in value.items():
        if isinstance(stp, str) and "?" in stp:
            raise TopologyError(f"{field}.{node}", "no labels here: the VLANs come from the link")
        if not isinstance(stp, str) or not _URN.match(stp):
            raise TopologyError(
                f"{field}.{node}", f"must be an STP id urn:ogf:network:…, got {stp!r}"
            )
        out[str(node)] = stp
    return out


@dataclass(frozen=True, slots=True)
class BorderEnd:
    """One of the NSI domain's border links as the requester side needs it."""

    link: str
    handoff: str  # the link's end in the neighbour: where braid's span meets the NSI one
    node: str  # the link's end in the NSI domain
    capacity: int
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class SegmentStps:
    """A segment of the NSI domain in the provider's words (VLAN ranges to choose from)."""

    source: str
    dest: str
    source_link: str
    dest_link: str
    capacity_mbps: int


def segment_stps(
    peer: NsiPeer, ends: Iterable[BorderEnd], entry: str, exit: str, bandwidth: int
) -> SegmentStps:
    """The STPs of the span entry → exit (hand-off points) and its capacity in Mbit/s."""
    source, source_link = _stp_at(peer, ends, entry, "entry")
    dest, dest_link = _stp_at(peer, ends, exit, "exit")
    return SegmentStps(source, dest, source_link, dest_link, max(1, math.ceil(bandwidth / 1e6)))


def _stp_at(peer: NsiPeer, ends: Iterable[BorderEnd], point: str, field: str) -> tuple[str, str]:
    # The widest link first, as the orchestrator's route takes it (ties by id).
    found = sorted((e for e in ends if e.handoff == point), key=lambda e: (-e.capacity, e.link))
    if not found:
        raise TopologyError(field, f"{point!r} is not a hand-off point of this NSI domain")
    end = found[0]
    vlans = f"{end.low}" if end.low == end.high else f"{end.low}-{end.high}"
    return f"{peer.stps[end.node]}?vlan={vlans}", end.link


def vlan_of(stp: str) -> int | None:
    """The single VLAN an STP id's label names (as a provider reports the one it chose)."""
    found = re.search(r"\?vlan=(\d+)$", stp)
    return int(found.group(1)) if found else None
