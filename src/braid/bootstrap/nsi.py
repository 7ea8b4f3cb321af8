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
from pathlib import Path

import yaml

from braid.adapters.api.nsi import NsiEndpoint
from braid.adapters.nsi.courier import HttpCourier
from braid.adapters.store import SqlRepository
from braid.adapters.store.nsi import SqlNsiConnections
from braid.app.nsi.memory import MemoryConnections
from braid.app.nsi.ports import ConnectionStore
from braid.app.nsi.provider import NsiProvider
from braid.app.nsi.requesters import Requesters, requesters_from_dict
from braid.app.nsi.sweep import sweep
from braid.app.ports import Repository
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings
from braid.core.errors import InputError

__all__ = ["NsiRunning", "load_requesters", "nsi_requesters", "start_nsi"]

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
    service: ReservationService,
    repo: Repository,
    settings: Settings,
    domain: str,
    requesters: Requesters | None = None,
) -> NsiRunning:
    """The provider for `domain` over `service` (on `repo`), its courier and its sweep, running.

    `requesters` (`nsi_requesters(settings)`): who may act as which requester NSA;
    None takes any requester at its word (--insecure)."""
    store: ConnectionStore = (
        SqlNsiConnections(repo.engine) if isinstance(repo, SqlRepository) else MemoryConnections()
    )
    provider = NsiProvider(service, store, domain, requesters)
    courier = HttpCourier()
    scheme = "https" if settings.tls_cert else "http"
    base_url = settings.nsi_url or f"{scheme}://{settings.host}:{settings.port}"
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


def nsi_requesters(settings: Settings) -> Requesters:
    """The allow-list of NSI requesters; without it (and client certificates) NSI is refused
    unless the server runs with --insecure."""
    if settings.nsi_requesters is None:
        raise InputError(
            "nsi_requesters",
            "the NSI provider takes requesters by client certificate only: give the file of "
            "certificates, NSA ids and replyTo endpoints (--nsi-requesters, docs/nsi.md), "
            "or --insecure on a test bench",
        )
    if settings.tls_client_ca is None or settings.tls_cert is None:
        raise InputError(
            "tls_client_ca",
            "the NSI provider needs HTTPS with client certificates: give --tls-cert, --tls-key "
            "and --tls-client-ca (the CA that signs the requesters' certificates)",
        )
    return load_requesters(Path(settings.nsi_requesters))


def load_requesters(path: Path) -> Requesters:
    """The requesters file (YAML or JSON); errors name the file and the entry."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError("nsi_requesters", f"cannot read {path}: {exc}") from exc
    try:
        return requesters_from_dict(data)
    except InputError as exc:
        raise InputError("nsi_requesters", f"{path}: {exc}") from exc
