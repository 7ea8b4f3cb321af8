"""One error shape for every failure: `{"error": {"code", "message", "field", ...}}`.

Each service error maps to exactly one status, so clients can branch on the
status and show `message`; `field` names what to fix, `alternatives` are
ready-to-post bodies and `conflicts` say which reservations stand in the way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from http import HTTPStatus
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from braid.adapters.api.fastjson import FastJSON
from braid.app.errors import (
    AuthError,
    ForbiddenError,
    IdempotencyError,
    NotFoundError,
    PolicyError,
    RejectedError,
)
from braid.app.ports import ConflictError
from braid.core.errors import InputError

# Where FastAPI found a bad value; the field name alone is what a client needs.
_LOCATIONS: Final = ("body", "query", "path", "header")


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    field: str | None = None,
    alternatives: Sequence[Mapping[str, Any]] = (),
    conflicts: Sequence[Any] = (),
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The error shape, with empty keys left out."""
    error: dict[str, Any] = {"code": code, "message": message}
    if field:
        error["field"] = field
    if alternatives:
        error["alternatives"] = list(alternatives)
    if conflicts:
        error["conflicts"] = list(conflicts)
    return FastJSON({"error": error}, status_code=status, headers=dict(headers or {}))


def field_of(loc: Iterable[Any]) -> str:
    """('body', 'links', 0, 'a') -> 'links.0.a'; a bare location names itself."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in _LOCATIONS:
        parts = parts[1:]
    return ".".join(parts)


def _validation_response(exc: RequestValidationError) -> JSONResponse:
    """FastAPI's first complaint, naming the field it is about."""
    errors: list[dict[str, Any]] = [dict(e) for e in exc.errors()]
    first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
    loc = tuple(first.get("loc") or ("body",))
    kind = first.get("type")
    if kind == "json_invalid":
        ctx = first.get("ctx")
        detail = ctx.get("error", "") if isinstance(ctx, dict) else ""
        at = f" at character {loc[1]}" if len(loc) > 1 else ""
        message = f"the body is not valid JSON ({detail or 'decode error'}{at})"
        return error_response(422, "invalid_json", message, field="body")
    message = _MESSAGES.get(str(kind), str(first.get("msg", "invalid")))
    if kind == "extra_forbidden" and loc[0] == "query":
        message = "unknown query parameter; check the spelling (see /docs)"
    elif kind == "missing" and loc == ("body",):
        message = "a JSON object body is required"
    return error_response(422, "invalid_input", message, field=field_of(loc))


_MESSAGES: Final = {
    "extra_forbidden": "unknown field; check the spelling (see /docs)",
    "model_attributes_type": "the body must be a JSON object",
    "dict_type": "must be a JSON object",
}


def install_error_handlers(app: FastAPI) -> None:
    """Map every error the service raises (and FastAPI's own) to the one shape."""

    async def on_input(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, InputError)
        return error_response(422, "invalid_input", exc.message, field=exc.field or None)

    async def on_validation(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return _validation_response(exc)

    async def on_not_found(_: Request, exc: Exception) -> JSONResponse:
        return error_response(404, "not_found", str(exc))

    async def on_forbidden(_: Request, exc: Exception) -> JSONResponse:
        return error_response(403, "forbidden", str(exc))

    async def on_policy(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, PolicyError)
        return error_response(403, "policy", str(exc), field=exc.rule)

    async def on_auth(_: Request, exc: Exception) -> JSONResponse:
        return error_response(401, "unauthorized", str(exc), headers={"WWW-Authenticate": "Bearer"})

    async def on_rejected(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RejectedError)
        conflicts = exc.detail.get("conflicts") or ()
        return error_response(
            409, "rejected", exc.reason, alternatives=exc.alternatives, conflicts=conflicts
        )

    async def on_idempotency(_: Request, exc: Exception) -> JSONResponse:
        return error_response(409, "idempotency_key_reused", str(exc), field="Idempotency-Key")

    async def on_conflict(_: Request, exc: Exception) -> JSONResponse:
        # The store refused a write that raced another one; nothing was written.
        assert isinstance(exc, ConflictError)
        return error_response(409, "conflict", str(exc), conflicts=exc.problems)

    async def on_http(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        return _http_response(exc)

    app.add_exception_handler(InputError, on_input)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(NotFoundError, on_not_found)
    app.add_exception_handler(ForbiddenError, on_forbidden)
    app.add_exception_handler(PolicyError, on_policy)
    app.add_exception_handler(AuthError, on_auth)
    app.add_exception_handler(RejectedError, on_rejected)
    app.add_exception_handler(ConflictError, on_conflict)
    app.add_exception_handler(IdempotencyError, on_idempotency)
    app.add_exception_handler(HTTPException, on_http)


def _http_response(exc: HTTPException) -> JSONResponse:
    """Starlette's own errors (unknown route, wrong method, body too large) in our shape."""
    if exc.status_code == 400:
        # FastAPI's only 400: a JSON body it could not decode (bytes that are not
        # UTF-8, say). To a client that is malformed JSON like any other.
        return error_response(422, "invalid_json", "the body is not valid JSON text", field="body")
    try:
        phrase = HTTPStatus(exc.status_code).phrase
    except ValueError:
        phrase = "error"
    code = _CODES.get(exc.status_code) or phrase.lower().replace(" ", "_").replace("-", "_")
    message = exc.detail if isinstance(exc.detail, str) and exc.detail else phrase
    return error_response(exc.status_code, code, message, headers=exc.headers)


_CODES: Final = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}
