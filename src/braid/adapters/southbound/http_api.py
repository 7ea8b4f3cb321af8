"""The local HTTP/JSON API of `braid controller`, on the web stack of `braid serve`.

    GET  /v1/switches   -> {"switches": [{"dpid": 1, "switch": "s1"}]}   connected switches
    POST /v1/apply      <- a rule set -> {"installed": true}  (202 + false: switch not connected,
                                                              kept and installed when it connects)
    POST /v1/remove     <- a rule set -> {"removed": true}    (202 likewise)
    GET  /v1/dump       -> {"rule_sets": [...]}              read back from every switch
    POST /v1/reconcile  -> {"reports": [{"switch", "added", "deleted"}]}
    GET  /v1/switches/{dpid}/flows[?cookie=C&cookie_mask=M]
                        -> {"flows": [{"cookie", "table_id", "priority", "match", "packets",
                                       "bytes"}]}   (braid's cookie tag and mask by default)
    GET  /v1/switches/{dpid}/meters -> {"meters": [{"meter_id", "packets", "bytes"}]}
    POST /v1/switches/{dpid}/packet-out <- {"actions": [...], "frames": ["<hex>", ...]}
                        -> {"sent": N}   each frame from the controller through the actions

Errors are JSON `{"error": "..."}`: 400 for a bad rule set (naming the
field), 401 without the right bearer token, 404 for an unknown resource or
a datapath that is not connected, 502 when a switch refuses or does not
answer. The server listens on
HOST:PORT (loopback by default) or on a Unix socket (`unix:PATH`), created
readable and writable by its owner only. With a token, every request must
send `Authorization: Bearer <token>`; the comparison takes the same time
whatever the token sent, so timing tells nothing of the right one.
"""

from __future__ import annotations

import hmac
import json
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from braid.adapters.southbound.codec import (
    flow_counts_to_json,
    meter_counts_to_json,
    packet_out_from_json,
    rule_set_from_json,
    rule_set_to_json,
)
from braid.adapters.southbound.driver import NotConnectedError, ReconcileReport, SouthboundError
from braid.adapters.southbound.switch_stats import FlowCount
from braid.core.delivery.samples import PacketsBytes
from braid.core.errors import InputError
from braid.core.rules.model import BRAID_COOKIE_MASK, BRAID_COOKIE_TAG, Action, RuleSet

__all__ = [
    "ApiServer",
    "ControllerBackend",
    "controller_api",
    "make_server",
    "owner_only_socket",
]

MAX_BODY = 16 * 1024 * 1024


class ControllerBackend(Protocol):
    def apply(self, rule_set: RuleSet) -> bool: ...
    def remove(self, rule_set: RuleSet) -> bool: ...
    def dump(self) -> list[RuleSet]: ...
    def reconcile(self) -> list[ReconcileReport]: ...
    def connected(self) -> dict[int, str]: ...
    def flow_stats(self, dpid: int, cookie: int, mask: int) -> list[FlowCount]: ...
    def meter_stats(self, dpid: int) -> dict[int, PacketsBytes]: ...
    def packet_out(self, dpid: int, actions: tuple[Action, ...], frames: list[bytes]) -> None: ...


def _report_json(report: ReconcileReport) -> dict[str, Any]:
    return {
        "switch": report.switch,
        "added": rule_set_to_json(report.added),
        "deleted": rule_set_to_json(report.deleted),
    }


async def _json_body(request: Request) -> Any:
    # Read by hand rather than as a pydantic model: the codec's errors name
    # the body's own fields (rule_set.flows[2].match...), as clients expect.
    body = await request.body()
    if len(body) > MAX_BODY:
        raise InputError("body", f"larger than {MAX_BODY} bytes")
    try:
        return json.loads(body or b"null")
    except json.JSONDecodeError as exc:
        raise InputError("body", f"not JSON: {exc}") from exc


async def _rule_set(request: Request) -> RuleSet:
    return rule_set_from_json(await _json_body(request))


def _number(text: str, field: str) -> int:
    """A path or query integer, decimal or 0x-hex; 0 to 2^64 - 1."""
    try:
        value = int(text, 0)
    except ValueError:
        value = -1
    if not 0 <= value < 1 << 64:
        raise InputError(field, f"must be an integer from 0 to 2^64-1, got {text!r}")
    return value


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _install_error_shape(api: FastAPI) -> None:
    async def bad_input(_: Request, exc: Exception) -> JSONResponse:
        return _error(400, str(exc))

    async def not_connected(_: Request, exc: Exception) -> JSONResponse:
        return _error(404, str(exc))

    async def switch_failed(_: Request, exc: Exception) -> JSONResponse:
        return _error(502, str(exc))

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 404:
            return _error(404, f"no such resource {request.method} {request.url.path}")
        return _error(exc.status_code, str(exc.detail))

    async def crashed(_: Request, exc: Exception) -> JSONResponse:
        return _error(500, repr(exc))  # a bug must still answer, or the client waits forever

    api.add_exception_handler(InputError, bad_input)
    api.add_exception_handler(NotConnectedError, not_connected)
    api.add_exception_handler(SouthboundError, switch_failed)
    api.add_exception_handler(StarletteHTTPException, http_error)
    api.add_exception_handler(Exception, crashed)


def _require_token(api: FastAPI, token: str) -> None:
    expected = f"Bearer {token}".encode()

    @api.middleware("http")
    async def bearer(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        sent = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(sent, expected):
            why = "wrong API token" if sent else "missing API token"
            response = _error(401, f"{why}: send 'Authorization: Bearer <token>'")
            response.headers["WWW-Authenticate"] = "Bearer"
            return response
        return await call_next(request)


def controller_api(backend: ControllerBackend, token: str | None = None) -> FastAPI:
    """The controller's routes over `backend` (the os-ken app, or a fake in tests).

    With `token`, every request must carry it as a bearer token.
    """
    api = FastAPI(title="braid controller", docs_url=None, redoc_url=None, openapi_url=None)
    _install_error_shape(api)
    if token is not None:
        _require_token(api, token)

    @api.get("/v1/switches")
    def switches() -> dict[str, Any]:
        listed = [{"dpid": d, "switch": n} for d, n in backend.connected().items()]
        return {"switches": listed}

    @api.get("/v1/dump")
    def dump() -> dict[str, Any]:
        return {"rule_sets": [rule_set_to_json(r) for r in backend.dump()]}

    @api.post("/v1/reconcile")
    def reconcile() -> dict[str, Any]:
        return {"reports": [_report_json(r) for r in backend.reconcile()]}

    @api.post("/v1/apply")
    async def apply(request: Request) -> JSONResponse:
        rule_set = await _rule_set(request)
        done = await _in_thread(backend.apply, rule_set)
        return JSONResponse({"installed": done}, status_code=200 if done else 202)

    @api.post("/v1/remove")
    async def remove(request: Request) -> JSONResponse:
        rule_set = await _rule_set(request)
        done = await _in_thread(backend.remove, rule_set)
        return JSONResponse({"removed": done}, status_code=200 if done else 202)

    _stats_routes(api, backend)
    return api


def _stats_routes(api: FastAPI, backend: ControllerBackend) -> None:
    """Counters and packet-outs, for the circuit check and delivery counters."""
    tag, mask = f"{BRAID_COOKIE_TAG:#x}", f"{BRAID_COOKIE_MASK:#x}"

    @api.get("/v1/switches/{dpid}/flows")
    def flows(dpid: str, cookie: str = tag, cookie_mask: str = mask) -> dict[str, Any]:
        wanted = _number(cookie, "cookie"), _number(cookie_mask, "cookie_mask")
        return flow_counts_to_json(backend.flow_stats(_number(dpid, "dpid"), *wanted))

    @api.get("/v1/switches/{dpid}/meters")
    def meters(dpid: str) -> dict[str, Any]:
        return meter_counts_to_json(backend.meter_stats(_number(dpid, "dpid")))

    @api.post("/v1/switches/{dpid}/packet-out")
    async def packet_out(dpid: str, request: Request) -> dict[str, Any]:
        datapath = _number(dpid, "dpid")
        actions, frames = packet_out_from_json(await _json_body(request))
        await run_in_threadpool(backend.packet_out, datapath, actions, frames)
        return {"sent": len(frames)}


async def _in_thread(change: Callable[[RuleSet], bool], rule_set: RuleSet) -> bool:
    # The backend waits for the switch's barrier reply: keep the event loop free.
    return await run_in_threadpool(change, rule_set)


class ApiServer:
    """The API served by uvicorn on a thread of its own (the process's main loop is os-ken's)."""

    def __init__(self, backend: ControllerBackend, address: str, token: str | None = None) -> None:
        self.address = address
        self._server = uvicorn.Server(_config(controller_api(backend, token), address))
        self._thread = threading.Thread(target=self._serve, name="braid-api", daemon=True)
        self._failure: BaseException | None = None

    def _serve(self) -> None:
        try:
            if self.address.startswith("unix:"):
                # uvicorn would make its own socket world-writable: hand it ours.
                self._server.run(sockets=[owner_only_socket(self.address[len("unix:") :])])
            else:
                self._server.run()
        except BaseException as exc:  # reported by start(), on the caller's thread
            self._failure = exc

    def start(self, timeout: float = 10.0) -> None:
        """Serve, and return once the socket accepts connections."""
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                # uvicorn logs a bind error itself and leaves with SystemExit.
                told = self._failure is not None and not isinstance(self._failure, SystemExit)
                reason = f": {self._failure}" if told else " (see the error above)"
                raise OSError(f"controller API could not listen on {self.address}{reason}")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10.0)


def owner_only_socket(path: str) -> socket.socket:
    """A Unix socket listening at `path`, which only its owner may open (mode 0600)."""
    if os.path.exists(path):
        os.unlink(path)  # a stale socket from a previous run
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # The umask applies as bind creates the file, so it is never open to others,
    # not even for an instant; the chmod only states the intent.
    saved = os.umask(0o177)
    try:
        sock.bind(path)
    finally:
        os.umask(saved)
    os.chmod(path, 0o600)
    sock.listen(128)
    return sock


def _config(api: FastAPI, address: str) -> uvicorn.Config:
    quiet: dict[str, Any] = {"log_level": "warning", "access_log": False, "lifespan": "off"}
    if address.startswith("unix:"):
        return uvicorn.Config(api, uds=address[len("unix:") :], **quiet)
    host, _, port = address.rpartition(":")
    return uvicorn.Config(api, host=host or "127.0.0.1", port=int(port), **quiet)


def make_server(backend: ControllerBackend, address: str, token: str | None = None) -> ApiServer:
    """The API on HOST:PORT or unix:PATH over `backend`, not yet serving (call `start`).

    With `token`, requests without it as their bearer token are refused (401).
    """
    return ApiServer(backend, address, token)
