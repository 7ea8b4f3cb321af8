"""The control protocol of `braid-dp link`: requests encoded, replies decoded (no I/O).

One JSON object per line each way. Requests carry `cmd` (get, set, cut,
restore, counters) and `direction` (a_to_b, b_to_a, both); `set` carries
the settings that change. A refused request comes back as
`{"ok": false, "error": "<field>: <why>"}` and changed nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Final, Literal

__all__ = [
    "ControlError",
    "Direction",
    "DirectionCounters",
    "GilbertElliott",
    "LinkSettings",
    "decode_reply",
    "encode_request",
    "encode_set",
    "parse_counters",
]

Direction = Literal["a_to_b", "b_to_a", "both"]
Command = Literal["get", "set", "cut", "restore", "counters"]
DIRECTIONS: Final = ("a_to_b", "b_to_a", "both")


class ControlError(RuntimeError):
    """braid-dp refused a request; the message names the field."""


@dataclass(frozen=True, slots=True)
class GilbertElliott:
    """Bursty loss, in percent: good→bad `p`, bad→good `r`, loss in each state."""

    p_percent: float
    r_percent: float
    bad_loss_percent: float = 100.0
    good_loss_percent: float = 0.0


@dataclass(frozen=True, slots=True)
class LinkSettings:
    """A change to one direction; fields left `None` stay as they are.

    `rate` is bit/s or a string like "100M"; 0 removes the limit.
    `gilbert=False` switches bursty loss off.
    """

    delay_ms: float | None = None
    jitter_ms: float | None = None
    loss_percent: float | None = None
    gilbert: GilbertElliott | Literal[False] | None = None
    rate: int | str | None = None
    queue_limit: int | None = None
    cut: bool | None = None

    def as_fields(self) -> dict[str, object]:
        """The JSON fields of a `set` request."""
        out: dict[str, object] = {}
        for field in fields(self):
            value = getattr(self, field.name)
            if value is None:
                continue
            if field.name == "gilbert":
                value = None if value is False else _gilbert_fields(value)
            out[field.name] = value
        return out


def _gilbert_fields(channel: GilbertElliott) -> dict[str, float]:
    return {field.name: getattr(channel, field.name) for field in fields(channel)}


@dataclass(frozen=True, slots=True)
class DirectionCounters:
    """What one direction did to its packets since start."""

    received: int
    forwarded: int
    forwarded_bytes: int
    dropped_loss: int
    dropped_queue: int
    dropped_cut: int
    dropped_oversize: int
    send_errors: int
    socket_drops: int
    queue_depth: int


def _check_direction(direction: str) -> None:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction: {direction!r} is not one of {', '.join(DIRECTIONS)}")


def encode_request(command: Command, direction: Direction = "both") -> str:
    """A request line without settings (get, cut, restore, counters)."""
    _check_direction(direction)
    return json.dumps({"cmd": command, "direction": direction}) + "\n"


def encode_set(settings: LinkSettings, direction: Direction = "both") -> str:
    """A `set` request line; refuses an empty change."""
    _check_direction(direction)
    changes = settings.as_fields()
    if not changes:
        raise ValueError("settings: nothing to change")
    return json.dumps({"cmd": "set", "direction": direction, **changes}) + "\n"


def decode_reply(line: str) -> dict[str, object]:
    """The reply's object; `ControlError` when braid-dp refused the request."""
    try:
        reply = json.loads(line)
    except json.JSONDecodeError as error:
        raise ControlError(f"reply: not JSON ({error}): {line[:200]!r}") from error
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        raise ControlError(f"reply: no ok field: {line[:200]!r}")
    if not reply["ok"]:
        raise ControlError(str(reply.get("error", "refused without a reason")))
    return reply


def parse_counters(reply: dict[str, object]) -> dict[str, DirectionCounters]:
    """The counters of a `counters` reply, by direction name."""
    raw = reply.get("counters")
    if not isinstance(raw, dict):
        raise ControlError("reply: no counters")
    names = [field.name for field in fields(DirectionCounters)]
    out: dict[str, DirectionCounters] = {}
    for direction, values in raw.items():
        if not isinstance(values, dict) or not all(isinstance(values.get(n), int) for n in names):
            raise ControlError(f"reply: counters of {direction} are incomplete")
        out[str(direction)] = DirectionCounters(**{name: int(values[name]) for name in names})
    return out
