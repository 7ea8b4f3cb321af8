"""The monitor's Prometheus metrics, in a registry of its own."""

from __future__ import annotations

import errno

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

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

    def serve(self, port: int, address: str = "127.0.0.1") -> None:
        """Serve /metrics on `address:port`; a taken one raises `AddressInUseError`."""
        try:
            start_http_server(port, address, registry=self.registry)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise AddressInUseError(f"{address}:{port}") from exc
            raise
