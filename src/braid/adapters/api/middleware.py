"""Plain ASGI middleware: request metrics, a body-size limit and a last-resort 500.

Plain ASGI rather than Starlette's BaseHTTPMiddleware: these wrap `receive`
and `send` directly, so they neither buffer bodies nor change how errors
propagate.
"""

from __future__ import annotations

import json
import logging

from prometheus_client import Counter
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)


class RequestMetrics:
    """Counts requests by method, route template (not raw path) and status."""

    def __init__(self, app: ASGIApp, counter: Counter) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            # The router records the matched route in the shared scope; raw
            # paths would give one time series per reservation id.
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.counter.labels(method=scope["method"], route=template, status=str(status)).inc()


class BodyLimit:
    """Refuses bodies over `max_bytes` with 413, by Content-Length and by counting.

    The checks run when the endpoint reads the body (after routing), so the
    request is still counted under its route; a body that lies about its
    length is stopped as soon as the bytes received pass the limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
                raise self._too_large()
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise self._too_large()
            return message

        await self.app(scope, limited_receive, send)

    def _too_large(self) -> HTTPException:
        # FastAPI re-raises HTTPExceptions met while reading the body, so this
        # reaches the error handlers and leaves in the usual error shape.
        return HTTPException(413, f"the body is larger than {self.max_bytes} bytes")


class CrashGuard:
    """Any exception nobody mapped becomes a short 500 in the error shape, and is logged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watching_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watching_send)
        except Exception:
            log.exception("unhandled error in %s %s", scope["method"], scope["path"])
            if started:
                raise  # too late for a clean answer; let the server close the connection
            await _send_internal_error(send)


async def _send_internal_error(send: Send) -> None:
    body = json.dumps(
        {"error": {"code": "internal", "message": "internal error; the server log has details"}}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 500, "headers": headers})
    await send({"type": "http.response.body", "body": body})
