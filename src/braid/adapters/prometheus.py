"""Prometheus metrics of one `braid serve` (its own registry, so tests stay apart)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from braid.app.delivery.history import DeliveryHistory
from braid.app.reservations.observation import Observation
from braid.core.delivery import DeliveryStatus

__all__ = ["LATENCY_BUCKETS", "PrometheusMetrics"]

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)


class PrometheusMetrics:
    """The reservation service's and the provisioning loop's metrics, and the scrape."""

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
        self.peak_next_hour = Gauge(
            "braid_link_peak_next_hour",
            "Highest booked share of capacity over the coming hour, per link direction",
            ["link", "direction"],
            registry=self.registry,
        )
        self.reservations = Gauge(
            "braid_reservations",
            "Live reservations (held, reserved, active) by state",
            ["state"],
            registry=self.registry,
        )
        self.holds = Gauge("braid_holds", "Holds not yet confirmed", registry=self.registry)
        self.next_hold_expiry = Gauge(
            "braid_hold_next_expiry_seconds",
            "Seconds until the first hold expires (NaN without holds)",
            registry=self.registry,
        )
        self.seconds_since_read = Gauge(
            "braid_replica_seconds_since_read",
            "Seconds since this replica last read the store's changes",
            registry=self.registry,
        )
        self.changes_behind = Gauge(
            "braid_replica_changes_behind",
            "Store changes this replica has not applied yet",
            registry=self.registry,
        )
        self.store_seconds = Histogram(
            "braid_store_seconds",
            "Time of store operations: a group-commit write, a read of changes",
            ["operation"],
            buckets=LATENCY_BUCKETS,
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

    def watch_delivery(self, history: DeliveryHistory) -> None:
        """Export the sampled reservations' counters and degraded flags at every scrape."""
        self.registry.register(_DeliveryCollector(history))

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

    def store_time(self, operation: str, seconds: float) -> None:
        self.store_seconds.labels(operation=operation).observe(seconds)

    def render(self, observe: Callable[[], Observation]) -> bytes:
        """The exposition text; the service's state is observed at scrape time."""
        seen = observe()
        for load in seen.links:
            self.utilisation.labels(link=load.link, direction=load.direction).set(load.now)
            where = {"link": load.link, "direction": load.direction}
            self.peak_next_hour.labels(**where).set(load.peak_next_hour)
        for state, count in seen.reservations.items():
            self.reservations.labels(state=state).set(count)
        self.holds.set(seen.holds)
        if seen.next_hold_expiry is None:
            self.next_hold_expiry.set(float("nan"))
        else:
            self.next_hold_expiry.set(seen.next_hold_expiry)
        self.seconds_since_read.set(seen.seconds_since_read)
        self.changes_behind.set(seen.changes_behind)
        return generate_latest(self.registry)


class _DeliveryCollector(Collector):
    """Per reservation and direction: the bytes counted since braid's first sample of it
    (taken after its circuit check, so without the probes; a braid restart starts them
    again, which Prometheus's rate() expects), and whether the reservation is degraded
    now."""

    def __init__(self, history: DeliveryHistory) -> None:
        self.history = history

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        labels = ["reservation", "direction"]
        families = {
            what: CounterMetricFamily(
                f"braid_delivery_{what}_bytes",
                f"Bytes {what} per reservation and direction since braid began sampling it",
                labels=labels,
            )
            for what in ("offered", "delivered", "dropped")
        }
        degraded = GaugeMetricFamily(
            "braid_delivery_degraded",
            "1 when a sampled reservation gets less than it booked while offering enough",
            labels=["reservation"],
        )
        for rid, seen in self.history.all().items():
            ways = ((seen.counted[0], seen.sender, seen.receiver),
                    (seen.counted[1], seen.receiver, seen.sender))  # fmt: skip
            for counted, sender, receiver in ways:
                direction = f"{sender}->{receiver}"
                families["offered"].add_metric([rid, direction], counted.offered_bytes)
                families["delivered"].add_metric([rid, direction], counted.delivered_bytes)
                families["dropped"].add_metric([rid, direction], counted.dropped_bytes)
            degraded.add_metric([rid], float(seen.status is DeliveryStatus.DEGRADED))
        yield from families.values()
        yield degraded
