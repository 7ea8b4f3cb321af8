"""Refusals remembered while the mirror's bookings stand still.

Refusing a booking is the planner's slowest answer: it searches for the
alternatives (earliest start, widest path, max-flow bound). The same
request asked again before anything is booked or released gets the same
answer, so it is kept, keyed by the request and the body it came in (the
offers are built from the body), and dropped as soon as the mirror's
network changes: what is served from here is exactly what planning again
would give.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping
from typing import Any, Final

import orjson

from braid.core.planning.requests import Request

# Distinct refusals between two changes of the network; a few suffice.
MEMO_LIMIT: Final = 256


@dataclasses.dataclass(frozen=True)
class Refusal:
    kind: str
    reason: str
    offers: tuple[Mapping[str, Any], ...]


class RefusalMemo:
    """Refusals valid for one state of the network (callers hold the mirror's lock)."""

    def __init__(self, limit: int = MEMO_LIMIT) -> None:
        self.limit = limit
        self._state: Hashable = None
        self._known: dict[tuple[Request, bytes], Refusal] = {}

    def get(self, state: Hashable, request: Request, body: Mapping[str, Any]) -> Refusal | None:
        """The refusal remembered for this request in network `state`, if any."""
        if state != self._state:
            self._state, self._known = state, {}
            return None
        key = _key(request, body)
        return None if key is None else self._known.get(key)

    def put(
        self,
        state: Hashable,
        request: Request,
        body: Mapping[str, Any],
        refusal: Refusal,
    ) -> None:
        if state != self._state:
            self._state, self._known = state, {}
        key = _key(request, body)
        if key is None:
            return
        if len(self._known) >= self.limit:
            self._known.clear()
        self._known[key] = refusal


def _key(request: Request, body: Mapping[str, Any]) -> tuple[Request, bytes] | None:
    """The request without its id (each gets a fresh one), and the body as sent."""
    try:
        sent = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not JSON (an in-process caller's own objects): not remembered
        return None
    return dataclasses.replace(request, id=""), sent
