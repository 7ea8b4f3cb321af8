"""Prometheus metrics of one service instance (its own registry, so tests stay apart)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "braid_http_requests",
            "HTTP requests by route and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.admissions = Counter(
            "braid_admissions", "Reservations admitted", registry=self.registry
        )
        self.rejections = Counter(
            "braid_rejections",
            "Reservations rejected, by reason",
            ["reason"],
            registry=self.registry,
        )
        self.decision_seconds = Histogram(
            "braid_decision_seconds",
            "Time to decide on a reservation",
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.utilisation = Gauge(
            "braid_link_utilisation",
            "Booked share of capacity now, per link direction",
            ["link", "direction"],
            registry=self.registry,
        )

        self.provisioning_seconds = Histogram(
            "braid_provisioning_pass_seconds",
            "Time of one provisioning pass (read switches, change them, record states)",
            buckets=(*LATENCY_BUCKETS, 5.0, 10.0),
            registry=self.registry,
        )
        self.failing_switches = Gauge(
            "braid_provisioning_failing_switches",
            "Switches the last provisioning pass could not read or change",
            registry=self.registry,
        )

        self.provisioning_states = Gauge(
            "braid_provisioning_reservations",
            "Reservations by provisioning state (those no pass has touched yet are not counted)",
            ["state"],
            registry=self.registry,
        )

    def provisioning_pass(self, seconds: float, failing: int) -> None:
        self.provisioning_seconds.observe(seconds)
        self.failing_switches.set(failing)

    def provisioning_counts(self, counts: Mapping[str, int]) -> None:
        for state, count in counts.items():
            self.provisioning_states.labels(state=state).set(count)

    def admitted(self, seconds: float) -> None:
        self.admissions.inc()
        self.decision_seconds.observe(seconds)

    def rejected(self, reason: str, seconds: float) -> None:
        self.rejections.labels(reason=reason).inc()
        self.decision_seconds.observe(seconds)

    def render(self, utilisation: Callable[[], Iterable[tuple[str, str, float]]]) -> bytes:
        """The exposition text; link utilisation is sampled at scrape time."""
        for link, direction, share in utilisation():
            self.utilisation.labels(link=link, direction=direction).set(share)
        return generate_latest(self.registry)
