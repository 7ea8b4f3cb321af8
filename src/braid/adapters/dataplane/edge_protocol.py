"""The control protocol of `braid-dp edge`: config and requests encoded, replies decoded (no I/O).

One JSON object per line each way, as for the link emulator. Requests carry
`cmd`: `get`, `configure` (a whole config), `set_weights` (one reservation's
weights, in path order), `set_reseq` (the resequencer's knobs: S, T, LRF,
hold time, idle time, caps) and `counters`. A refused request comes back
as `{"ok": false, "error": "<field>: <why>"}` and changed nothing.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Final, Literal

from braid.adapters.dataplane.protocol import ControlError

__all__ = [
    "EdgeConfig",
    "EdgeCounters",
    "EdgePath",
    "EdgeReservation",
    "PathCounters",
    "ReseqSettings",
    "ToHostCounters",
    "encode_configure",
    "encode_edge_request",
    "encode_set_reseq",
    "encode_set_weights",
    "parse_edge_counters",
]

EdgeCommand = Literal["get", "counters"]
MAX_VLAN: Final = 4094


@dataclass(frozen=True, slots=True)
class EdgePath:
    """One path of a reservation: the VLAN its switch rules carry, and its WRR weight."""

    vlan: int
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not 1 <= self.vlan <= MAX_VLAN:
            raise ValueError(f"vlan: {self.vlan} is outside 1 to {MAX_VLAN}")
        if not math.isfinite(self.weight) or self.weight < 0:
            raise ValueError(f"weight: {self.weight} is not a finite number >= 0")


@dataclass(frozen=True, slots=True)
class EdgeReservation:
    """Host packets from `src` to `dst` (prefixes; None: any) split over `paths`.

    `burst` packets go per path turn; `resequence` puts TCP arriving on
    these paths back in order (the plan's `resequence`).
    """

    id: str
    paths: tuple[EdgePath, ...]
    src: str | None = None
    dst: str | None = None
    burst: int = 1
    resequence: bool = True

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("id: must not be empty")
        if not self.paths:
            raise ValueError("paths: at least one path is needed")
        if self.burst < 1:
            raise ValueError(f"burst: {self.burst} is below 1")

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "src": self.src,
            "dst": self.dst,
            "paths": [{"vlan": p.vlan, "weight": p.weight} for p in self.paths],
            "burst": self.burst,
            "resequence": self.resequence,
        }


@dataclass(frozen=True, slots=True)
class ReseqSettings:
    """The resequencer's knobs; fields left `None` keep braid-dp's value.

    `buffer_size` (S) and `threshold` (T) count segments held per flow; `lrf`
    is the loss-recovery factor; a gap is given up after `hold_ms`; a flow
    idle for `idle_ms` is forgotten; `max_*` cap what all flows hold.
    """

    buffer_size: int | None = None
    threshold: int | None = None
    lrf: int | None = None
    hold_ms: float | None = None
    idle_ms: float | None = None
    max_flows: int | None = None
    max_packets: int | None = None
    max_bytes: int | None = None

    def as_fields(self) -> dict[str, object]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


@dataclass(frozen=True, slots=True)
class EdgeConfig:
    """A whole edge configuration (what `--config` and `configure` take)."""

    reservations: tuple[EdgeReservation, ...] = ()
    reseq: ReseqSettings = field(default_factory=ReseqSettings)

    def as_json(self) -> dict[str, object]:
        return {
            "reservations": [r.as_json() for r in self.reservations],
            "reseq": self.reseq.as_fields(),
        }


@dataclass(frozen=True, slots=True)
class PathCounters:
    vlan: int
    weight: float
    sent: int


@dataclass(frozen=True, slots=True)
class ToHostCounters:
    """Network → host: frames, tags popped, and what the resequencer did."""

    received: int
    sent: int
    send_errors: int
    dropped_oversize: int
    popped: int
    passed: int
    not_resequenced: int
    in_order: int
    resequenced: int
    old: int
    released_threshold: int
    released_hold: int
    released_full: int
    released_cap: int
    untracked: int
    flows_expired: int
    buffered_packets: int
    buffered_bytes: int
    flows: int


@dataclass(frozen=True, slots=True)
class EdgeCounters:
    """Per reservation the packets sent on each path; host → network totals; network → host;
    `arrived`: frames received per reservation VLAN (what the far edge `sent` on that path,
    less what the path lost and what is still in flight)."""

    paths: dict[str, tuple[PathCounters, ...]]
    to_net: dict[str, int]
    to_host: ToHostCounters
    arrived: dict[int, int] = field(default_factory=dict)

    def sent_by_vlan(self) -> dict[int, int]:
        """Frames this edge sent per VLAN, over all its reservations."""
        return {p.vlan: p.sent for paths in self.paths.values() for p in paths}


def encode_edge_request(command: EdgeCommand) -> str:
    return json.dumps({"cmd": command}) + "\n"


def encode_configure(config: EdgeConfig) -> str:
    return json.dumps({"cmd": "configure", "config": config.as_json()}) + "\n"


def encode_set_weights(reservation: str, weights: Sequence[float]) -> str:
    """Weights in the order of the reservation's paths (e.g. the plan's `weights`)."""
    if not weights:
        raise ValueError("weights: at least one is needed")
    return (
        json.dumps({"cmd": "set_weights", "reservation": reservation, "weights": list(weights)})
        + "\n"
    )


def encode_set_reseq(settings: ReseqSettings) -> str:
    changes = settings.as_fields()
    if not changes:
        raise ValueError("settings: nothing to change")
    return json.dumps({"cmd": "set_reseq", **changes}) + "\n"


def _ints(raw: object, names: Sequence[str], where: str) -> dict[str, int]:
    if not isinstance(raw, dict) or not all(isinstance(raw.get(n), int) for n in names):
        raise ControlError(f"reply: counters of {where} are incomplete")
    return {name: int(raw[name]) for name in names}


def _paths(raw: object) -> dict[str, tuple[PathCounters, ...]]:
    if not isinstance(raw, dict):
        raise ControlError("reply: no path counters")
    out: dict[str, tuple[PathCounters, ...]] = {}
    for reservation, paths in raw.items():
        if not isinstance(paths, list):
            raise ControlError(f"reply: path counters of {reservation} are not a list")
        items = []
        for path in paths:
            counts = _ints(path, ("vlan", "sent"), f"{reservation}'s paths")
            weight = path.get("weight") if isinstance(path, dict) else None
            if not isinstance(weight, int | float):
                raise ControlError(f"reply: a path of {reservation} has no weight")
            items.append(
                PathCounters(vlan=counts["vlan"], weight=float(weight), sent=counts["sent"])
            )
        out[str(reservation)] = tuple(items)
    return out


def parse_edge_counters(reply: dict[str, object]) -> EdgeCounters:
    raw = reply.get("counters")
    if not isinstance(raw, dict):
        raise ControlError("reply: no counters")
    to_net = raw.get("to_net")
    if not isinstance(to_net, dict):
        raise ControlError("reply: no to_net counters")
    totals = _ints(
        to_net, ("received", "sent", "send_errors", "dropped_oversize", "passed"), "to_net"
    )
    names = [f.name for f in fields(ToHostCounters)]
    to_host = ToHostCounters(**_ints(raw.get("to_host"), names, "to_host"))
    return EdgeCounters(
        paths=_paths(to_net.get("paths")),
        to_net=totals,
        to_host=to_host,
        arrived=_arrived(raw.get("to_host")),
    )


def _arrived(to_host: object) -> dict[int, int]:
    raw = to_host.get("arrived", []) if isinstance(to_host, dict) else None
    if not isinstance(raw, list):
        raise ControlError("reply: to_host.arrived is not a list")
    counts = [_ints(item, ("vlan", "received"), "to_host.arrived") for item in raw]
    return {c["vlan"]: c["received"] for c in counts}
