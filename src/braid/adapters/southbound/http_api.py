"""The local HTTP/JSON API of `braid controller` (loopback only by default).

    GET  /v1/switches   -> {"switches": [{"dpid": 1, "switch": "s1"}]}   connected switches
    POST /v1/apply      <- a rule set -> {"installed": true}  (202 + false: switch not connected,
                                                              kept and installed when it connects)
    POST /v1/remove     <- a rule set -> {"removed": true}    (202 likewise)
    GET  /v1/dump       -> {"rule_sets": [...]}              read back from every switch
    POST /v1/reconcile  -> {"reports": [{"switch", "added", "deleted"}]}

Errors are JSON `{"error": "..."}`: 400 for a bad rule set (naming the
field), 502 when a switch refuses or does not answer.
"""

from __future__ import annotations

import json
import os
import socketserver
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from braid.adapters.southbound.codec import rule_set_from_json, rule_set_to_json
from braid.adapters.southbound.driver import ReconcileReport, SouthboundError
from braid.core.errors import InputError
from braid.core.rules.model import RuleSet

__all__ = ["ControllerBackend", "make_server"]

MAX_BODY = 16 * 1024 * 1024


class ControllerBackend(Protocol):
    def apply(self, rule_set: RuleSet) -> bool: ...
    def remove(self, rule_set: RuleSet) -> bool: ...
    def dump(self) -> list[RuleSet]: ...
    def reconcile(self) -> list[ReconcileReport]: ...
    def connected(self) -> dict[int, str]: ...


def _report_json(report: ReconcileReport) -> dict[str, Any]:
    return {
        "switch": report.switch,
        "added": rule_set_to_json(report.added),
        "deleted": rule_set_to_json(report.deleted),
    }


def _read_rule_set(handler: BaseHTTPRequestHandler) -> RuleSet:
    length = int(handler.headers.get("Content-Length") or 0)
    if length > MAX_BODY:
        raise InputError("body", f"larger than {MAX_BODY} bytes")
    try:
        body = json.loads(handler.rfile.read(length) or b"null")
    except json.JSONDecodeError as exc:
        raise InputError("body", f"not JSON: {exc}") from exc
    return rule_set_from_json(body)


Reply = tuple[HTTPStatus, dict[str, Any]]


def _switches(backend: ControllerBackend, _: BaseHTTPRequestHandler) -> Reply:
    listed = [{"dpid": d, "switch": n} for d, n in backend.connected().items()]
    return HTTPStatus.OK, {"switches": listed}


def _dump(backend: ControllerBackend, _: BaseHTTPRequestHandler) -> Reply:
    return HTTPStatus.OK, {"rule_sets": [rule_set_to_json(r) for r in backend.dump()]}


def _reconcile(backend: ControllerBackend, _: BaseHTTPRequestHandler) -> Reply:
    return HTTPStatus.OK, {"reports": [_report_json(r) for r in backend.reconcile()]}


def _apply(backend: ControllerBackend, handler: BaseHTTPRequestHandler) -> Reply:
    done = backend.apply(_read_rule_set(handler))
    return (HTTPStatus.OK if done else HTTPStatus.ACCEPTED), {"installed": done}


def _remove(backend: ControllerBackend, handler: BaseHTTPRequestHandler) -> Reply:
    done = backend.remove(_read_rule_set(handler))
    return (HTTPStatus.OK if done else HTTPStatus.ACCEPTED), {"removed": done}


_ROUTES: dict[tuple[str, str], Callable[[ControllerBackend, BaseHTTPRequestHandler], Reply]] = {
    ("GET", "/v1/switches"): _switches,
    ("GET", "/v1/dump"): _dump,
    ("POST", "/v1/reconcile"): _reconcile,
    ("POST", "/v1/apply"): _apply,
    ("POST", "/v1/remove"): _remove,
}


class _Handler(BaseHTTPRequestHandler):
    backend: ControllerBackend

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are frequent; errors are reported in the replies

    def address_string(self) -> str:
        return str(self.client_address or "local")

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def _route(self, method: str) -> None:
        route = _ROUTES.get((method, self.path))
        if route is None:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no such resource {method} {self.path}"})
            return
        try:
            status, payload = route(self.backend, self)
        except InputError as exc:
            status, payload = HTTPStatus.BAD_REQUEST, {"error": str(exc)}
        except SouthboundError as exc:
            status, payload = HTTPStatus.BAD_GATEWAY, {"error": str(exc)}
        except Exception as exc:  # a bug must still answer, or the client waits forever
            status, payload = HTTPStatus.INTERNAL_SERVER_ERROR, {"error": repr(exc)}
        self._send(status, payload)

    def _send(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def make_server(backend: ControllerBackend, address: str) -> socketserver.BaseServer:
    """An HTTP server (not yet serving) on HOST:PORT or unix:PATH, handing requests to `backend`.

    A Unix socket keeps the API to whoever may open the file.
    """
    handler = type("BraidApiHandler", (_Handler,), {"backend": backend})
    if address.startswith("unix:"):
        path = address[len("unix:") :]
        if os.path.exists(path):
            os.unlink(path)  # a stale socket from a previous run
        return _UnixHTTPServer(path, handler)
    host, _, port = address.rpartition(":")
    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), handler)
    server.daemon_threads = True
    return server
