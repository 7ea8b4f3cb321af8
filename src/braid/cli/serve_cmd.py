"""`braid serve`: the REST API over the store, with the lifecycle ticker."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from braid.cli.common import fail, fail_in_use, settle_heap, warn_insecure
from braid.cli.topology_cmd import DefaultCapacityOpt
from braid.core.errors import InputError

if TYPE_CHECKING:
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
            "/v1/interdomain/reservations, negotiated with the domain agents. Without "
            "--topology, it is also the initial topology when the store has none.",
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
    peer_token_file: Annotated[
        Path | None,
        typer.Option(
            "--peer-token-file",
            help="With --domains: file holding the bearer token agents with a peer policy "
            "know this server's negotiation by (sent with every call to an agent).",
        ),
    ] = None,
    southbound: Annotated[
        Path | None,
        typer.Option(
            "--southbound",
            help="Wiring file (switches, ports, hosts): braid then programs the switches, "
            "installing each reservation's rules before it starts and removing them at its end.",
        ),
    ] = None,
    tls_cert: Annotated[
        Path | None,
        typer.Option("--tls-cert", help="PEM certificate chain: serve HTTPS (with --tls-key)."),
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option("--tls-key", help="PEM private key of --tls-cert.")
    ] = None,
    nsi_domain: Annotated[
        str | None,
        typer.Option(
            "--nsi-domain",
            help="Serve the NSI CS 2.0 provider (/NSI/services/CS2) for this NSI domain, "
            "e.g. example.net: STPs are urn:ogf:network:DOMAIN:topology:NODE?vlan=N.",
        ),
    ] = None,
    nsi_requesters: Annotated[
        Path | None,
        typer.Option(
            "--nsi-requesters",
            help="With --nsi-domain: YAML file mapping each client certificate's subject to "
            "the requester NSA ids it may act as and their replyTo endpoints (docs/nsi.md).",
        ),
    ] = None,
    tls_client_ca: Annotated[
        Path | None,
        typer.Option(
            "--tls-client-ca",
            help="PEM CA file: ask HTTPS clients for a certificate it signed (the NSI "
            "requesters'; REST callers still use tokens).",
        ),
    ] = None,
    metrics_open: Annotated[
        bool,
        typer.Option(
            "--metrics-open",
            help="Serve /metrics to anyone, without a token (else operator and monitor tokens).",
        ),
    ] = False,
    insecure: Annotated[
        bool,
        typer.Option(
            "--insecure",
            help="Test benches only: NSI without client certificates or an allow-list (any "
            "requester at its word, confirmations to any replyTo) and /metrics open; warned.",
        ),
    ] = False,
) -> None:
    """Run the REST API (user ↔ orchestrator) on a database, until SIGTERM or Ctrl-C."""
    import uvicorn

    from braid.adapters.api import create_app
    from braid.adapters.logs import configure_logging
    from braid.adapters.topology_files import TopologyFileError
    from braid.bootstrap.serve import StoreUnavailableError, hide_password, start_serving
    from braid.cli.interdomain_cmd import started_interdomain

    settings = settings_from(
        config,
        database=database,
        topology=topology,
        host=host,
        port=port,
        southbound=southbound,
        tls_cert=tls_cert,
        tls_key=tls_key,
        nsi_domain=nsi_domain,
        nsi_requesters=nsi_requesters,
        tls_client_ca=tls_client_ca,
        metrics_open=metrics_open or None,
        insecure=insecure or None,
    )
    if domains is not None and settings.topology_file is None:
        # The whole network of the domains file is the service's own topology too:
        # a fresh store starts from it, as it would from --topology.
        settings = replace(settings, topology_file=str(domains))
    tls = _tls_checked(settings)
    _warn_open(settings)
    # Bound before anything else starts: a taken port is said in one line, at once.
    listening = _listening(settings.host, settings.port)
    # Warnings and errors of braid's own loggers (a failed tick, an unhandled
    # request error) go to stderr, as text or JSON; uvicorn keeps its own format.
    configure_logging(settings.log_format)
    interdomain = started_interdomain(
        domains, negotiation_db, interdomain_strategy, settings.booking_policy(), peer_token_file
    )
    try:
        try:
            serving = start_serving(settings, default_capacity)
        except (StoreUnavailableError, TopologyFileError) as exc:
            fail(str(exc))
        except InputError as exc:
            fail(str(exc), _hint(exc))
        for note in serving.notes:
            typer.echo(note, err=True)
        try:
            nsi = serving.nsi.endpoint if serving.nsi is not None else None
            history = serving.delivery.history if serving.delivery is not None else None
            app = create_app(serving.service, settings, interdomain, nsi, serving.metrics, history)
            scheme = "https" if tls else "http"
            if nsi is not None:
                typer.echo(f"NSI provider {nsi.provider.nsa} at {nsi.base_url}/NSI/services/CS2")
            typer.echo(
                f"braid listening on {scheme}://{settings.host}:{settings.port} "
                f"(database {hide_password(settings.database_url)})"
            )
            _stop_on_sigterm()
            settle_heap()
            web = uvicorn.Config(
                app,
                host=settings.host,
                port=settings.port,
                log_level="warning",
                access_log=False,  # a log line per request costs CPU; /metrics counts them
                # The C event loop and HTTP parser (uvicorn[standard]): less
                # CPU per request than asyncio's loop and h11.
                loop="uvloop",
                ssl_certfile=settings.tls_cert,
                ssl_keyfile=settings.tls_key,
                **_client_certificates(settings),  # the HTTP parser too
            )
            # uvicorn shuts down gracefully on a signal, then re-raises it to us.
            server = uvicorn.Server(web)
            with contextlib.suppress(KeyboardInterrupt):
                server.run(sockets=[listening])
            if not server.started:
                fail("the web server did not start (its error is above)")
        finally:
            serving.close()
    finally:
        listening.close()
        if interdomain is not None:
            interdomain.close()
    typer.echo("braid stopped")


def _listening(host: str, port: int) -> socket.socket:
    from braid.adapters.listening import AddressInUseError, listening_socket

    try:
        return listening_socket(host, port)
    except AddressInUseError as exc:
        fail_in_use(exc, "--port (or BRAID_PORT)")
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", "check --host and --port")


def _tls_checked(settings: Settings) -> bool:
    """Whether to serve HTTPS; a certificate or key that cannot be used fails here, at once."""
    if settings.tls_cert is None or settings.tls_key is None:
        return False
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(settings.tls_cert, settings.tls_key)
    except (OSError, ssl.SSLError) as exc:
        fail(f"--tls-cert/--tls-key: cannot use {settings.tls_cert} and {settings.tls_key}: {exc}")
    if settings.tls_client_ca is not None:
        try:
            context.load_verify_locations(settings.tls_client_ca)
        except (OSError, ssl.SSLError) as exc:
            fail(f"--tls-client-ca: cannot use {settings.tls_client_ca}: {exc}")
    return True


def _client_certificates(settings: Settings) -> dict[str, Any]:
    """uvicorn's options: ask clients for a certificate signed by `tls_client_ca` (optional:
    REST callers use tokens) and hand the verified subject to the app (NSI's allow-list)."""
    if settings.tls_client_ca is None or settings.tls_cert is None:
        return {"http": "httptools"}
    import ssl

    from braid.adapters.nsi.client_certificates import PeerCertProtocol

    return {
        "http": PeerCertProtocol,
        "ssl_ca_certs": settings.tls_client_ca,
        "ssl_cert_reqs": ssl.CERT_OPTIONAL,
    }


def _warn_open(settings: Settings) -> None:
    if settings.insecure:
        opened = "/metrics" + (" and the NSI provider" if settings.nsi_domain else "")
        warn_insecure(f"braid serve's {opened}")
    elif settings.metrics_open:
        warn_insecure("braid serve's /metrics (--metrics-open)")


def _hint(exc: InputError) -> str:
    if exc.field.endswith(".capacity") and "missing" in exc.message:
        return "pass --default-capacity (e.g. --default-capacity 100G) for links without speed"
    return ""


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
    for name in (
        "topology_file",
        "southbound_file",
        "tls_cert",
        "tls_key",
        "nsi_requesters",
        "tls_client_ca",
    ):
        if name in given:
            given[name] = str(given[name])
    settings = replace(settings, **given)
    try:
        check_settings(settings)
    except InputError as exc:
        fail(f"settings: {exc}")
    return settings


def _stop_on_sigterm() -> None:
    """Make SIGTERM end the server like Ctrl-C does, with the same clean shutdown.

    uvicorn handles both signals while it runs, then re-raises the one it got
    to the handler that was there before; this is that handler for SIGTERM.
    """

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
