"""`?tz=`: any /v1 answer with its instants also in a time zone, in one ASGI layer.

UTC stays the default and the machine form: without `tz` nothing changes, so
existing clients read what they always did. With `tz=Europe/Paris` (any IANA
name) the JSON answer, errors included, gains the local renderings that
`local_fields` describes; `tz=me` asks for the caller's own `tz` setting
(`PATCH /v1/me`), and is refused, naming `tz`, when they have none. The stored
setting is never applied unasked: it says how to read what a user sends, and a
script that parses `start` must not see its answers change when they set it.

One layer rather than a parameter on every route: every route that answers
with instants is covered, the routes' own query models (which refuse unknown
parameters) never see `tz`, and the answer is rewritten only when asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote_plus

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from braid.adapters.api.errors import error_response
from braid.adapters.api.local_fields import in_zone
from braid.core.errors import InputError
from braid.core.model.local_time import zone_named

# Where the asked zone travels from this layer to the bearer check (for `tz=me`).
SCOPE_KEY: Final = "braid.tz"
CALLERS_OWN: Final = "me"
_ROUTES: Final = "/v1/"


@dataclass(slots=True)
class AskedZone:
    """The zone a request asked its answer in: `name` as sent; `zone` once known
    (at once for a zone name, after the bearer check for `me`)."""

    name: str
    zone: str | None = None

    def for_caller(self, own: str | None) -> None:
        """Settle `me` as the caller's setting `own`; refused when they have none."""
        if self.name != CALLERS_OWN:
            return
        if own is None:
            raise InputError(
                "tz",
                "tz=me asks for your tz setting, and you have none; set one "
                '(PATCH /v1/me {"tz": "Europe/Paris"}) or name a zone (tz=Europe/Paris)',
            )
        self.zone = own


class LocalTimes:
    """Reads `tz` off /v1 query strings and renders the JSON answers in it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query: bytes = scope.get("query_string", b"")
        if scope["type"] != "http" or b"tz=" not in query or not scope["path"].startswith(_ROUTES):
            await self.app(scope, receive, send)
            return
        kept, sent = _split_tz(query)
        if not sent:
            await self.app(scope, receive, send)
            return
        try:
            asked = _asked(sent)
        except InputError as exc:
            refusal = error_response(422, "invalid_input", exc.message, field=exc.field)
            await refusal(scope, receive, send)
            return
        inner = {**scope, "query_string": kept, SCOPE_KEY: asked}
        await self.app(inner, receive, _rendering(send, asked))


def _split_tz(query: bytes) -> tuple[bytes, list[str]]:
    """The query string without its `tz` parameters (the others byte for byte), and
    the `tz` values sent."""
    kept: list[bytes] = []
    sent: list[str] = []
    for part in query.split(b"&"):
        key, _, value = part.partition(b"=")
        if unquote_plus(key.decode("latin-1")) == "tz":
            sent.append(unquote_plus(value.decode("latin-1")))
        else:
            kept.append(part)
    return b"&".join(kept), sent


def _asked(sent: list[str]) -> AskedZone:
    if len(sent) > 1:
        raise InputError("tz", "give tz once")
    name = sent[0]
    if name == CALLERS_OWN:
        return AskedZone(name)
    zone_named(name, "tz")
    return AskedZone(name, name)


def asked_zone(scope: Scope) -> AskedZone | None:
    """The zone this request asked its answer in, if it asked."""
    found = scope.get(SCOPE_KEY)
    return found if isinstance(found, AskedZone) else None


def _rendering(send: Send, asked: AskedZone) -> Send:
    """`send`, holding back a JSON answer until it is whole to render it in the zone."""
    start: Message | None = None
    chunks: list[bytes] = []

    async def held(message: Message) -> None:
        nonlocal start
        if message["type"] == "http.response.start" and _is_json(message):
            start = message
            return
        if message["type"] != "http.response.body" or start is None:
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        whole = b"".join(chunks)
        body = _rendered(whole, asked.zone)
        if body is whole:  # unchanged (an empty HEAD answer, say): as the route sent it
            await send(start)
            await send({"type": "http.response.body", "body": body})
            return
        headers = [(k, v) for k, v in start.get("headers", ()) if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return held


def _is_json(start: Message) -> bool:
    return any(
        name == b"content-type" and value.startswith(b"application/json")
        for name, value in start.get("headers", ())
    )


def _rendered(body: bytes, zone: str | None) -> bytes:
    if zone is None:  # `me` on a route that checks no bearer token: nothing to go by
        return body
    try:
        content = orjson.loads(body)
    except orjson.JSONDecodeError:
        return body
    return orjson.dumps(in_zone(content, zone), option=orjson.OPT_NON_STR_KEYS)
