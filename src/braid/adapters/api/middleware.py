"""`RequestGuard`: request ids, metrics, a body-size limit and a last-resort 500, in one ASGI layer.

Plain ASGI rather than Starlette's BaseHTTPMiddleware: it wraps `receive`
and `send` directly, so it neither buffers bodies nor changes how errors
propagate. One layer for the three jobs, because every layer costs a
coroutine and two wrapped callables on every request.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

from prometheus_client import Counter
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from braid.app.request_context import REQUEST_ID

log = logging.getLogger(__name__)
# What a client may send as its own request id: short, and safe in a log line.
_REQUEST_ID = re.compile(rb"[A-Za-z0-9._:-]{1,64}")


class RequestGuard:
    """Counts every request, refuses bodies over `max_bytes` (413), turns a crash into a 500.

    - Metrics: requests by method, route template (not raw path) and final
      status, 500s included.
    - Body limit: by Content-Length and by counting the bytes received. The
      checks run when the endpoint reads the body (after routing), so the
      request is still counted under its route; a body that lies about its
      length is stopped as soon as the bytes received pass the limit.
    - Crash guard: any exception nobody mapped becomes a short 500 in the
      error shape, and is logged.
    - Request id: the client's `X-Request-ID` (a plain token) or a new one,
      set for the request's context (logs, audit entries) and sent back in
      the response's `X-Request-ID`.
    """

    def __init__(self, app: ASGIApp, counter: Counter, max_bytes: int) -> None:
        self.app = app
        self.counter = counter
        self.max_bytes = max_bytes
        # Children of the counter by label values: `labels()` validates and
        # locks on every call, a dict lookup does not.
        self._counted: dict[tuple[str, str, str], Any] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 0  # 0 until the response starts
        declared = _content_length(scope)
        received = 0
        request_id = _request_id(scope)
        REQUEST_ID.set(request_id)  # this task's context: logs and audit entries name it

        async def limited_receive() -> Message:
            nonlocal received
            if declared > self.max_bytes:
                raise self._too_large()
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise self._too_large()
            return message

        async def watching_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [*message.get("headers", ()), (b"x-request-id", request_id.encode())]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, limited_receive, watching_send)
        except Exception:
            log.exception("unhandled error in %s %s", scope["method"], scope["path"])
            if status:
                raise  # too late for a clean answer; let the server close the connection
            status = 500
            await _send_internal_error(send)
        finally:
            self._count(scope, status or 500)

    def _count(self, scope: Scope, status: int) -> None:
        # The router records the matched route in the shared scope; raw
        # paths would give one time series per reservation id.
        template = getattr(scope.get("route"), "path", None) or "unmatched"
        key = (scope["method"], template, str(status))
        child = self._counted.get(key)
        if child is None:
            child = self.counter.labels(method=key[0], route=key[1], status=key[2])
            self._counted[key] = child
        child.inc()

    def _too_large(self) -> HTTPException:
        # FastAPI re-raises HTTPExceptions met while reading the body, so this
        # reaches the error handlers and leaves in the usual error shape.
        return HTTPException(413, f"the body is larger than {self.max_bytes} bytes")


def _request_id(scope: Scope) -> str:
    """The client's X-Request-ID when it is a plain token, else a new one."""
    for name, value in scope["headers"]:
        if name == b"x-request-id" and _REQUEST_ID.fullmatch(value):
            return str(value.decode())
    return uuid.uuid4().hex


def _content_length(scope: Scope) -> int:
    """The declared Content-Length, or -1 when absent or not a plain number."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else -1
    return -1


async def _send_internal_error(send: Send) -> None:
    body = json.dumps(
        {"error": {"code": "internal", "message": "internal error; the server log has details"}}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 500, "headers": headers})
    await send({"type": "http.response.body", "body": body})
