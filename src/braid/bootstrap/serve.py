"""`braid serve` put together: store, reservation service, lifecycle ticker, provisioning.

The command line reads options and settings and runs the web server; this
module builds everything behind it from concrete adapters and takes it down
again. Errors a user can fix are raised as `InputError` (naming the setting
or file) or `StoreUnavailableError`.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from braid.adapters.prometheus import PrometheusMetrics
from braid.adapters.store import SqlRepository, open_repository
from braid.adapters.topology_files import load_topology
from braid.app.ports import Repository
from braid.app.provisioning.runner import ProvisioningLoop
from braid.app.reservations import operations
from braid.app.reservations.link_state import settle_links
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings
from braid.bootstrap.delivery import DeliveryRunning, start_delivery
from braid.bootstrap.nsi import NsiRunning, nsi_requesters, start_nsi
from braid.bootstrap.provisioning import provisioning_store, start_provisioning
from braid.core.errors import BraidError
from braid.core.model.topology import topology_to_dict
from braid.core.model.units import parse_bandwidth

__all__ = [
    "Serving",
    "StoreUnavailableError",
    "close_store",
    "hide_password",
    "initial_topology",
    "open_store",
    "start_serving",
]

log = logging.getLogger(__name__)


class StoreUnavailableError(BraidError):
    """The database cannot be opened: bad URL, no server, no permission."""


@dataclass
class Serving:
    """What runs behind the REST API, and how to stop it."""

    repo: Repository
    service: ReservationService
    metrics: PrometheusMetrics
    notes: list[str] = field(default_factory=list)  # what the operator should know
    provisioning: ProvisioningLoop | None = None
    nsi: NsiRunning | None = None  # the NSI provider, when `nsi_domain` is set
    delivery: DeliveryRunning | None = None  # counters sampled, with provisioning
    _stop: threading.Event = field(default_factory=threading.Event)
    _ticker: threading.Thread | None = None

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        if self.delivery is not None:
            self.delivery.close()
        if self.provisioning is not None:
            self.provisioning.stop()
        if self.nsi is not None:
            self.nsi.close()
        self.service.stop()
        close_store(self.repo)


def start_serving(settings: Settings, default_capacity: str | None = None) -> Serving:
    """The store opened, the service started on it, the ticker and provisioning running."""
    # NSI's allow-list is read first: a bad one stops the server before anything opens.
    requesters = nsi_requesters(settings) if settings.nsi_domain and not settings.insecure else None
    repo = open_store(settings.database_url, sqlite_synchronous=settings.sqlite_synchronous)
    try:
        serving = _started(repo, settings, default_capacity)
    except BaseException:
        close_store(repo)
        raise
    serving._ticker = _start_ticker(serving.service, settings.tick_seconds, serving._stop)
    if settings.southbound_file is not None and serving.service.provisioning is not None:
        try:
            loop = start_provisioning(
                serving.service,
                serving.repo,
                serving.service.provisioning,
                settings,
                serving.metrics,
            )
            serving.provisioning = loop
            serving.delivery = start_delivery(
                serving.service,
                serving.repo,
                serving.service.provisioning,
                settings,
                serving.metrics,
            )
        except BaseException:
            serving.close()
            raise
    if settings.nsi_domain:
        serving.nsi = start_nsi(
            serving.service, serving.repo, settings, settings.nsi_domain, requesters
        )
    return serving


def open_store(url: str, *, sqlite_synchronous: str = "full") -> Repository:
    try:
        return open_repository(url, sqlite_synchronous=sqlite_synchronous)
    except Exception as exc:  # the driver's own errors: bad URL, no server, no permission
        raise StoreUnavailableError(
            f"cannot open the database {hide_password(url)}: {exc}"
        ) from exc


def close_store(repo: Repository) -> None:
    # Not part of the Repository protocol: the in-memory store has nothing to close.
    close = getattr(repo, "close", None)
    if callable(close):
        close()


def hide_password(url: str) -> str:
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def initial_topology(path: Path, default_capacity: str | None) -> dict[str, Any]:
    """A topology file (any supported format) as braid's own normalised dict."""
    default = parse_bandwidth(default_capacity, "--default-capacity") if default_capacity else None
    data = topology_to_dict(load_topology(path, default_capacity_bps=default))
    data.pop("v")  # the export format's version tag is not part of the stored topology
    return data


def _started(repo: Repository, settings: Settings, default_capacity: str | None) -> Serving:
    # PostgreSQL tells replicas of each other's changes; elsewhere the mirror
    # reads the store's changes before every decision.
    feed = repo.change_feed() if isinstance(repo, SqlRepository) else None
    provisioning = provisioning_store(repo) if settings.southbound_file else None
    metrics = PrometheusMetrics()
    service = ReservationService(
        repo,
        metrics=metrics,
        hold_seconds=settings.hold_seconds,
        feed=feed,
        provisioning=provisioning,
        policy=settings.booking_policy(),
        failback=settings.failback,
    )
    notes: list[str] = []
    stored = repo.topology()
    initial = None
    if settings.topology_file is not None:
        if stored is not None:
            notes.append(
                f"the store already has topology version {stored.version}; "
                f"{settings.topology_file} is not used (PUT /v1/topology changes it)"
            )
        else:
            initial = initial_topology(Path(settings.topology_file), default_capacity)
    service.start(initial)
    # A process killed in the middle of a link-state change may have left
    # bookings where the link states no longer want them: place them now.
    moved = settle_links(service.books, "braid", failback=service.failback)
    if moved:
        notes.append(f"placed {len(moved)} reservation(s) by the current link states")
    return Serving(repo, service, metrics, notes)


def _start_ticker(
    service: ReservationService, every: float, stop: threading.Event
) -> threading.Thread:
    """Records clock-driven transitions (expired holds free their capacity) in the store."""

    def run() -> None:
        while not stop.wait(every):
            try:
                operations.tick(service.books)
            except Exception:  # a failed tick must not end the ticker; the next one retries
                log.exception("lifecycle tick failed")

    thread = threading.Thread(target=run, name="braid-ticker", daemon=True)
    thread.start()
    return thread
