"""The monitor's Prometheus metrics, in a registry of its own."""

from __future__ import annotations

import errno
import hmac
import threading
from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from braid.adapters.listening import AddressInUseError

__all__ = ["MonitorMetrics"]


class MonitorMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rtt = Gauge("braid_monitor_rtt_ms", "Last answered probe's round trip", registry=r)
        self.probes = Counter("braid_monitor_probes", "Probes by result", ["result"], registry=r)
        self.rate = Gauge("braid_monitor_throughput_bps", "Last throughput reading", registry=r)
        self.detections = Counter(
            "braid_monitor_detections", "Degradations detected", ["reason"], registry=r
        )
        self.actions = Counter(
            "braid_monitor_actions", "Fail-over actions", ["to", "ok"], registry=r
        )
        self.action_seconds = Histogram(
            "braid_monitor_action_seconds",
            "From the decision to rules in the switch",
            buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5),
            registry=r,
        )
        self.target_lost = Gauge(
            "braid_monitor_target_lost", "1 while the probe target does not answer", registry=r
        )
        self.path = Gauge("braid_monitor_path", "1 for the path in use", ["path"], registry=r)

    def serve(self, port: int, address: str = "127.0.0.1", token: str | None = None) -> None:
        """Serve /metrics on a thread; with `token`, only to who sends it as a bearer token.

        A taken `address:port` raises `AddressInUseError`.
        """
        app = make_wsgi_app(self.registry)
        guarded = app if token is None else bearer_only(app, token)
        try:
            server = make_server(
                address, port, guarded, ThreadingWSGIServer, handler_class=_QuietHandler
            )
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise AddressInUseError(f"{address}:{port}") from exc
            raise
        threading.Thread(target=server.serve_forever, name="monitor-metrics", daemon=True).start()


Wsgi = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def bearer_only(app: Wsgi, token: str) -> Wsgi:
    """`app` for requests that send `Authorization: Bearer <token>`; 401 for any other."""
    expected = f"Bearer {token}".encode()

    def guarded(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        sent = str(environ.get("HTTP_AUTHORIZATION", "")).encode()
        if hmac.compare_digest(sent, expected):
            return app(environ, start_response)
        why = b"wrong metrics token" if sent else b"missing metrics token"
        start_response(
            "401 Unauthorized",
            [("Content-Type", "text/plain; charset=utf-8"), ("WWW-Authenticate", "Bearer")],
        )
        return [why + b": send 'Authorization: Bearer <token>'\n"]

    return guarded


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # a line per scrape is noise
        pass
