"""The symmetric weighted 5-tuple hash: which path a flow takes.

Stock switches spread a select group's traffic per flow by hashing header
fields; seed 000's SDX needs both directions of a TCP connection on the same
VLAN tunnel. This hash is symmetric (a flow and its reply hash alike, since
the two endpoints are sorted before hashing) and weighted exactly: bucket `i`
owns the fraction `weights[i] / sum(weights)` of the 64-bit hash space. It is
braid's own (blake2b based), so every process and machine agrees on it, unlike
Python's salted `hash`.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from braid.core.errors import InputError

__all__ = ["FiveTuple", "choose", "owned_fraction", "pick_weighted", "symmetric_hash"]

HASH_BITS: Final = 64


@dataclass(frozen=True, slots=True)
class FiveTuple:
    """A transport flow; ports are 0 for protocols without them."""

    src_ip: str
    dst_ip: str
    proto: int
    src_port: int = 0
    dst_port: int = 0

    def reversed(self) -> FiveTuple:
        """The same connection seen from the other end."""
        return FiveTuple(self.dst_ip, self.src_ip, self.proto, self.dst_port, self.src_port)


def _endpoint(ip: str, port: int) -> bytes:
    return ipaddress.ip_address(ip).packed + port.to_bytes(2, "big")


def symmetric_hash(flow: FiveTuple, basis: int = 0) -> int:
    """A 64-bit hash of `flow` equal to that of `flow.reversed()`."""
    ends = sorted((_endpoint(flow.src_ip, flow.src_port), _endpoint(flow.dst_ip, flow.dst_port)))
    data = basis.to_bytes(8, "big") + flow.proto.to_bytes(1, "big") + ends[0] + ends[1]
    return int.from_bytes(hashlib.blake2b(data, digest_size=HASH_BITS // 8).digest(), "big")


def pick_weighted(hash_value: int, weights: Sequence[int]) -> int:
    """The index whose share of the hash space holds `hash_value`.

    Index `i` owns `[W_i, W_i + w_i) * 2**64 / W` where `W_i` sums the weights
    before it; zero weights own nothing.
    """
    if any(w < 0 for w in weights):
        raise InputError("weights", f"must not be negative: {list(weights)}")
    total = sum(weights)
    if total <= 0:
        raise InputError("weights", "need at least one positive weight")
    point = (hash_value * total) >> HASH_BITS
    for index, weight in enumerate(weights):
        if point < weight:
            return index
        point -= weight
    raise AssertionError("unreachable: point < total")  # pragma: no cover


def choose(flow: FiveTuple, weights: Sequence[int], basis: int = 0) -> int:
    """The index (path, bucket, VLAN) that `flow` and its reply both take."""
    return pick_weighted(symmetric_hash(flow, basis), weights)


def owned_fraction(index: int, weights: Sequence[int]) -> tuple[int, int]:
    """How many of the 2**64 hash values pick `index`: (count, 2**64)."""
    total = sum(weights)
    space = 1 << HASH_BITS
    # Hash h picks the index whose cumulative range holds floor(h * W / 2**64);
    # the values mapping to the range [lo, hi) are those h >= ceil(lo * 2**64 / W).
    lo = sum(weights[:index])
    hi = lo + weights[index]
    return _first_hash(hi, total, space) - _first_hash(lo, total, space), space


def _first_hash(point: int, total: int, space: int) -> int:
    return -((-point * space) // total)
