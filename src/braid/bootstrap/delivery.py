"""Delivery sampling for `braid serve`: counters of the wiring's switches, the history,
the audit writer and the loop, put together."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from braid.adapters.prometheus import PrometheusMetrics
from braid.adapters.southbound.counters import SwitchCounters
from braid.adapters.store import SqlRepository
from braid.adapters.store.delivery_audit import SqlDeliveryAudit
from braid.adapters.wiring_files import load_wiring
from braid.app.delivery.history import DeliveryHistory
from braid.app.delivery.loop import DeliveryLoop
from braid.app.delivery.memory import MemoryDeliveryAudit
from braid.app.delivery.ports import DeliveryAudit
from braid.app.delivery.sampler import DeliverySampler
from braid.app.delivery.targets import ReservationTargets
from braid.app.ports import Repository
from braid.app.provisioning.ports import DeliveryCounters, ProvisioningStore
from braid.app.provisioning.reservations import Wiring
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings
from braid.bootstrap.provisioning import switch_stats_for

__all__ = ["DeliveryRunning", "delivery_audit", "start_delivery"]


@dataclass
class DeliveryRunning:
    history: DeliveryHistory
    loop: DeliveryLoop
    audit: DeliveryAudit

    def close(self) -> None:
        self.loop.stop()


def delivery_audit(repo: Repository) -> DeliveryAudit:
    """Degraded deliveries in the store's audit log when it is a database, else in memory."""
    if isinstance(repo, SqlRepository):
        return SqlDeliveryAudit(repo.engine)
    return MemoryDeliveryAudit()


def start_delivery(
    service: ReservationService,
    repo: Repository,
    store: ProvisioningStore,
    settings: Settings,
    metrics: PrometheusMetrics,
    counters: DeliveryCounters | None = None,
) -> DeliveryRunning:
    """A running sampler of `settings.southbound_file`'s installed reservations.

    Counters come from each switch through its driver: ovs-ofctl for a
    `direct` switch, the controller's API for one behind `braid controller`.
    """
    assert settings.southbound_file is not None
    config = load_wiring(Path(settings.southbound_file), service.topology)
    if counters is None:
        counters = SwitchCounters(switch_stats_for(config))
    history = DeliveryHistory(settings.delivery_samples)
    audit = delivery_audit(repo)
    targets = ReservationTargets(
        repo, store, Wiring(config.ports, config.host_at), lambda: service.topology
    )
    sampler = DeliverySampler(targets, counters, history, audit)
    loop = DeliveryLoop(sampler, service.clock, settings.delivery_seconds)
    metrics.watch_delivery(history)
    loop.start()
    return DeliveryRunning(history, loop, audit)
