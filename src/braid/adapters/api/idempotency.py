"""The `Idempotency-Key` request header of the POSTs that book or change, and the replay mark."""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import Header

from braid.app.reservations.idempotency import HEADER, MAX_KEY_LENGTH

__all__ = ["IdempotencyKey", "replayed_headers"]

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias=HEADER,
        max_length=MAX_KEY_LENGTH,
        description="a key of your own (a UUID) for this request: sent again with the same "
        "body, the first answer comes back (marked `Idempotent-Replayed: true`) and "
        "nothing is done twice; with another body, 409",
    ),
]
_REPLAYED: Final = {"Idempotent-Replayed": "true"}


def replayed_headers(replayed: bool) -> dict[str, str]:
    return dict(_REPLAYED) if replayed else {}
