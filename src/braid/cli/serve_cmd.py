"""`braid serve`: the REST API over the store, with the lifecycle ticker."""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import threading
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from braid.cli.common import fail
from braid.cli.topology_cmd import DefaultCapacityOpt
from braid.core.errors import InputError

if TYPE_CHECKING:
    from braid.app.ports import Repository
    from braid.app.provisioning.runner import ProvisioningLoop
    from braid.app.service import ReservationService
    from braid.app.settings import Settings

log = logging.getLogger(__name__)

ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", "-c", help="YAML settings file (BRAID_* variables override it)."),
]
DatabaseOpt = Annotated[
    str | None,
    typer.Option(
        "--database", help="SQLAlchemy URL, e.g. sqlite:///braid.db or postgresql+psycopg://…"
    ),
]


def serve(
    config: ConfigOpt = None,
    topology: Annotated[
        Path | None,
        typer.Option("--topology", "-t", help="Initial topology, used when the store has none."),
    ] = None,
    database: DatabaseOpt = None,
    host: Annotated[str | None, typer.Option("--host", help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port to listen on.")] = None,
    default_capacity: DefaultCapacityOpt = None,
    domains: Annotated[
        Path | None,
        typer.Option(
            "--domains",
            help="Multi-domain topology (with a `domains` section): serves "
            "/v1/interdomain/reservations, negotiated with the domain agents.",
        ),
    ] = None,
    negotiation_db: Annotated[
        Path,
        typer.Option("--negotiation-db", help="SQLite file for the negotiation's decision log."),
    ] = Path("negotiation.db"),
    interdomain_strategy: Annotated[
        str,
        typer.Option(
            "--interdomain-strategy",
            help="Default for interdomain requests that name none: "
            "equal-split, partial-offers or full-offers.",
        ),
    ] = "partial-offers",
    southbound: Annotated[
        Path | None,
        typer.Option(
            "--southbound",
            help="Wiring file (switches, ports, hosts): braid then programs the switches, "
            "installing each reservation's rules before it starts and removing them at its end.",
        ),
    ] = None,
) -> None:
    """Run the REST API (user ↔ orchestrator) on a database, until SIGTERM or Ctrl-C."""
    import uvicorn

    from braid.adapters.api import create_app
    from braid.cli.interdomain_cmd import started_interdomain

    # Warnings and errors of braid's own loggers (a failed tick, an unhandled
    # request error) go to stderr with a time stamp; uvicorn keeps its own format.
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = settings_from(
        config, database=database, topology=topology, host=host, port=port, southbound=southbound
    )
    interdomain = started_interdomain(domains, negotiation_db, interdomain_strategy)
    repo = open_store(settings.database_url, sqlite_synchronous=settings.sqlite_synchronous)
    service: ReservationService | None = None
    try:
        service = _started_service(repo, settings, default_capacity)
        stop = threading.Event()
        ticker = _start_ticker(service, settings.tick_seconds, stop)
        provisioning = _start_provisioning(service, settings)
        app = create_app(service, settings, interdomain)
        typer.echo(
            f"braid listening on http://{settings.host}:{settings.port} "
            f"(database {hide_password(settings.database_url)})"
        )
        _stop_on_sigterm()
        # uvicorn shuts down gracefully on a signal, then re-raises it to us.
        with contextlib.suppress(KeyboardInterrupt):
            uvicorn.run(
                app,
                host=settings.host,
                port=settings.port,
                log_level="warning",
                access_log=False,  # a log line per request costs CPU; /metrics counts them
                # The C event loop and HTTP parser (uvicorn[standard]): less
                # CPU per request than asyncio's loop and h11.
                loop="uvloop",
                http="httptools",
            )
        stop.set()
        ticker.join(timeout=5)
        if provisioning is not None:
            provisioning.stop()
    finally:
        if service is not None:
            service.stop()
        if interdomain is not None:
            interdomain.close()
        close_store(repo)
    typer.echo("braid stopped")


def settings_from(config: Path | None, **overrides: Any) -> Settings:
    """Settings from file and environment, then the command line's options on top."""
    from braid.app.settings import check_settings, load_settings

    try:
        settings = load_settings(config)
    except InputError as exc:
        fail(f"settings: {exc}")
    names = {
        "database": "database_url",
        "topology": "topology_file",
        "southbound": "southbound_file",
    }
    given = {names.get(k, k): v for k, v in overrides.items() if v is not None}
    for name in ("topology_file", "southbound_file"):
        if name in given:
            given[name] = str(given[name])
    settings = replace(settings, **given)
    try:
        check_settings(settings)
    except InputError as exc:
        fail(f"settings: {exc}")
    return settings


def open_store(url: str, *, sqlite_synchronous: str = "full") -> Repository:
    from braid.adapters.store import open_repository

    try:
        return open_repository(url, sqlite_synchronous=sqlite_synchronous)
    except Exception as exc:  # the driver's own errors: bad URL, no server, no permission
        fail(f"cannot open the database {hide_password(url)}: {exc}")


def close_store(repo: Repository) -> None:
    # Not part of the Repository protocol: the in-memory store has nothing to close.
    close = getattr(repo, "close", None)
    if callable(close):
        close()


def hide_password(url: str) -> str:
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def _started_service(
    repo: Repository, settings: Settings, default_capacity: str | None
) -> ReservationService:
    from braid.adapters.store import SqlRepository
    from braid.app.service import ReservationService
    from braid.bootstrap.provisioning import provisioning_store

    # PostgreSQL tells replicas of each other's changes; elsewhere the mirror
    # reads the store's changes before every decision.
    feed = repo.change_feed() if isinstance(repo, SqlRepository) else None
    provisioning = provisioning_store(repo) if settings.southbound_file else None
    service = ReservationService(
        repo, hold_seconds=settings.hold_seconds, feed=feed, provisioning=provisioning
    )
    stored = repo.topology()
    initial = None
    if settings.topology_file is not None:
        if stored is not None:
            typer.echo(
                f"the store already has topology version {stored.version}; "
                f"{settings.topology_file} is not used (PUT /v1/topology changes it)",
                err=True,
            )
        else:
            initial = initial_topology(Path(settings.topology_file), default_capacity)
    try:
        service.start(initial)
    except InputError as exc:
        fail(str(exc))
    return service


def initial_topology(path: Path, default_capacity: str | None) -> dict[str, Any]:
    """A topology file (any supported format) as braid's own normalised dict."""
    from braid.cli.common import open_topology
    from braid.core.model.topology import topology_to_dict

    data = topology_to_dict(open_topology(path, default_capacity))
    data.pop("v")  # the export format's version tag is not part of the stored topology
    return data


def _start_provisioning(service: ReservationService, settings: Settings) -> ProvisioningLoop | None:
    """The provisioning loop, when a wiring file says how to reach the switches."""
    if settings.southbound_file is None or service.provisioning is None:
        return None
    from braid.bootstrap.provisioning import start_provisioning

    try:
        return start_provisioning(service, service.provisioning, settings)
    except InputError as exc:
        fail(f"southbound: {exc}")


def _start_ticker(
    service: ReservationService, every: float, stop: threading.Event
) -> threading.Thread:
    """Records clock-driven transitions (expired holds free their capacity) in the store."""
    from braid.app import operations

    def run() -> None:
        while not stop.wait(every):
            try:
                operations.tick(service)
            except Exception:  # a failed tick must not end the ticker; the next one retries
                log.exception("lifecycle tick failed")

    thread = threading.Thread(target=run, name="braid-ticker", daemon=True)
    thread.start()
    return thread


def _stop_on_sigterm() -> None:
    """Make SIGTERM end the server like Ctrl-C does, with the same clean shutdown.

    uvicorn handles both signals while it runs, then re-raises the one it got
    to the handler that was there before; this is that handler for SIGTERM.
    """

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
