"""The NSI provider of `braid serve`: connections in the same store, a courier, the sweep.

The sweep runs every `tick_seconds` beside the lifecycle ticker: it turns
expired holds into reserveTimeout, ended windows into PassedEndTime,
reservations cancelled or failed behind NSI's back into errorEvent, and
window starts and ends of provisioned connections into dataPlaneStateChange.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from braid.adapters.api.nsi import NsiEndpoint
from braid.adapters.nsi.courier import HttpCourier
from braid.adapters.store import SqlRepository
from braid.adapters.store.nsi import SqlNsiConnections
from braid.app.nsi.memory import MemoryConnections
from braid.app.nsi.ports import ConnectionStore
from braid.app.nsi.provider import NsiProvider
from braid.app.nsi.sweep import sweep
from braid.app.ports import Repository
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings

__all__ = ["NsiRunning", "start_nsi"]

log = logging.getLogger(__name__)


@dataclass
class NsiRunning:
    endpoint: NsiEndpoint
    courier: HttpCourier
    _stop: threading.Event = field(default_factory=threading.Event)
    _sweeper: threading.Thread | None = None

    def close(self) -> None:
        self._stop.set()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)
        self.courier.close()


def start_nsi(
    service: ReservationService, repo: Repository, settings: Settings, domain: str
) -> NsiRunning:
    """The provider for `domain` over `service` (on `repo`), its courier and its sweep, running."""
    store: ConnectionStore = (
        SqlNsiConnections(repo.engine) if isinstance(repo, SqlRepository) else MemoryConnections()
    )
    provider = NsiProvider(service, store, domain)
    courier = HttpCourier()
    base_url = settings.nsi_url or f"http://{settings.host}:{settings.port}"
    endpoint = NsiEndpoint(provider, courier, base_url.rstrip("/"), service.clock())
    running = NsiRunning(endpoint, courier)

    def run() -> None:
        while not running._stop.wait(settings.tick_seconds):
            try:
                for outgoing in sweep(provider):
                    courier.send(outgoing)
            except Exception:  # a failed sweep must not end the sweeper; the next one retries
                log.exception("NSI sweep failed")

    running._sweeper = threading.Thread(target=run, name="braid-nsi-sweep", daemon=True)
    running._sweeper.start()
    return running
