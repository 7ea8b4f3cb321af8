"""`braid agent` (one domain's agent) and `braid orchestrator` (the negotiating orchestrator).

Both serve gRPC until SIGTERM or Ctrl-C. Run as a module too
(`python -m braid.cli.agent_cmd agent ...`), which `braid demo` and the tests use.
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from braid.app.negotiation.defaults import (
    BATCH_LINGER,
    CALL_TIMEOUT,
    HOLD_SECONDS,
    MAX_HOLD_SECONDS,
    MAX_PATHS,
    REFRESH_PERIOD,
    STRATEGY,
)
from braid.cli.common import InsecureOpt, fail, fail_in_use, require_credentials, settle_heap
from braid.core.errors import BraidError

if TYPE_CHECKING:
    from braid.adapters.rpc.channels import TlsFiles

# The youngest generation's threshold for these servers (see `settle_heap`).
_YOUNG_OBJECTS = 10_000
TopologyOpt = Annotated[
    Path,
    typer.Option(
        "--topology",
        "-t",
        help="This domain's own file (see `braid topology split`), or a single "
        "multi-domain file, of which only this domain's part is used.",
    ),
]
ListenOpt = Annotated[
    str | None,
    typer.Option("--listen", help="host:port to serve on (default: the address in the file)."),
]
CertOpt = Annotated[Path | None, typer.Option("--tls-cert", help="PEM certificate (enables TLS).")]
KeyOpt = Annotated[Path | None, typer.Option("--tls-key", help="PEM private key of --tls-cert.")]
CaOpt = Annotated[
    Path | None,
    typer.Option("--tls-ca", help="PEM CA: servers require client certificates signed by it."),
]
CpuOpt = Annotated[
    int | None,
    typer.Option(
        "--cpu",
        help="Keep the process on this CPU (its gRPC threads hand each message to one "
        "another: cheaper on one CPU). Default: wherever the system runs it.",
    ),
]


def _pin(cpu: int | None) -> None:
    """Before anything starts a thread of its own."""
    if cpu is None:
        return
    from braid.adapters.cpu_affinity import pin_to_cpu

    try:
        pin_to_cpu(cpu)
    except BraidError as exc:
        fail(str(exc))


def _sync_level(value: str) -> str:
    """The SQLite level of `--sync`, checked before anything is opened."""
    from braid.adapters.negotiation.hold_store import SYNC_LEVELS

    level = value.upper()
    if level not in SYNC_LEVELS:
        fail(f"--sync: must be {' or '.join(SYNC_LEVELS)}, not {value!r}")
    return level


def _tls(cert: Path | None, key: Path | None, ca: Path | None) -> TlsFiles | None:
    from braid.adapters.rpc.channels import TlsFiles

    if cert is None and key is None and ca is None:
        return None
    for flag, path in (("--tls-cert", cert), ("--tls-key", key), ("--tls-ca", ca)):
        if path is not None and not path.is_file():
            fail(f"{flag}: no such file {path}")
    return TlsFiles(cert, key, ca)


def _wait_for_signal() -> None:
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    stop.wait()


def agent(
    topology: TopologyOpt,
    domain: Annotated[str, typer.Option("--domain", "-d", help="The domain this agent serves.")],
    store: Annotated[Path, typer.Option("--store", help="SQLite file for holds and bookings.")],
    listen: ListenOpt = None,
    max_hold: Annotated[
        int, typer.Option("--max-hold", help="Longest hold, seconds.")
    ] = MAX_HOLD_SECONDS,
    tls_cert: CertOpt = None,
    tls_key: KeyOpt = None,
    tls_ca: CaOpt = None,
    southbound: Annotated[
        Path | None,
        typer.Option(
            "--southbound",
            help="Wiring file of this domain's switches: install committed rules on them.",
        ),
    ] = None,
    provision_lead: Annotated[
        int, typer.Option("--provision-lead", help="Seconds before a window its rules go in.")
    ] = 5,
    enforce_rates: Annotated[
        bool,
        typer.Option(
            help="Hold each reservation's rates on the links between domains (queues, and "
            "meters for hard policing); --no-enforce-rates for switches without them."
        ),
    ] = True,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            help="Peer policy (YAML): which orchestrators may reserve here, within which "
            "limits. Without it the agent is open to any caller.",
        ),
    ] = None,
    sync: Annotated[
        str,
        typer.Option(
            "--sync",
            help="Hold store: FULL (each vote, commit and release on disk before the "
            "answer) or NORMAL (survives a crash of the agent, not of its machine).",
        ),
    ] = "FULL",
    peer_token_file: Annotated[
        Path | None,
        typer.Option(
            "--peer-token-file",
            help="File holding the bearer token orchestrators must present (one word of "
            "16+ characters; the same file as `braid orchestrator --peer-token-file`). "
            "With --policy, name tokens in the policy instead.",
        ),
    ] = None,
    insecure: InsecureOpt = False,
    cpu: CpuOpt = None,
) -> None:
    """Serve one domain's offers, holds and bookings over gRPC (the D-O interface).

    Callers must authenticate: mutual TLS (--tls-cert/--tls-key/--tls-ca), a bearer
    token (--peer-token-file) or a peer policy (--policy); --insecure serves it open."""
    level = _sync_level(sync)
    _pin(cpu)
    tls = _tls(tls_cert, tls_key, tls_ca)
    mutual = tls is not None and tls.cert is not None and tls.ca is not None
    require_credentials(
        f"braid agent {domain}",
        mutual or policy is not None or peer_token_file is not None,
        insecure,
        "--peer-token-file FILE, --policy FILE or --tls-cert/--tls-key/--tls-ca",
    )
    from braid.adapters.rpc.channels import read_token
    from braid.bootstrap.agent import start_agent

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    from braid.adapters.listening import AddressInUseError

    try:
        token = read_token(peer_token_file) if peer_token_file is not None else None
        handle = start_agent(
            topology,
            domain,
            store,
            listen=listen,
            tls=tls,
            max_hold_seconds=max_hold,
            southbound=southbound,
            provision_lead=provision_lead,
            enforce_rates=enforce_rates,
            policy=policy,
            synchronous=level,
            token=token,
        )
    except AddressInUseError as exc:
        where = (
            "--listen"
            if listen
            else f"--listen (the default is {domain}'s agent address in {topology})"
        )
        fail_in_use(exc, where)
    except (BraidError, OSError, ValueError) as exc:
        fail(str(exc))
    settle_heap(_YOUNG_OBJECTS)
    held = sum(1 for h in handle.service.status() if h.state.value == "held")
    typer.echo(
        f"braid agent {domain} listening on port {handle.port} "
        f"({'visible' if handle.service.visible else 'blind'}, {held} holds restored)"
    )
    _wait_for_signal()
    handle.stop()
    typer.echo(f"braid agent {domain} stopped")


def orchestrator(
    store: Annotated[Path, typer.Option("--store", help="SQLite file for the decision log.")],
    listen: Annotated[str, typer.Option("--listen", help="host:port to serve on.")] = (
        "127.0.0.1:7100"
    ),
    strategy: Annotated[
        str, typer.Option("--strategy", help="equal-split, partial-offers or full-offers.")
    ] = STRATEGY,
    max_paths: Annotated[
        int, typer.Option("--max-paths", help="Candidate domain paths.")
    ] = MAX_PATHS,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Per call to an agent, s.")
    ] = CALL_TIMEOUT,
    hold: Annotated[
        int, typer.Option("--hold", help="Hold lifetime asked at Prep, s.")
    ] = HOLD_SECONDS,
    sync: Annotated[
        str,
        typer.Option("--sync", help="Decision log: FULL (fsync each decision) or NORMAL."),
    ] = "FULL",
    parallel: Annotated[
        bool,
        typer.Option(
            "--parallel/--sequential",
            help="Call a round's agents together (default) or one after another (less CPU).",
        ),
    ] = True,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch/--no-batch",
            help="Coalesce concurrent negotiations' messages to an agent into one call.",
        ),
    ] = True,
    stream: Annotated[
        bool,
        typer.Option(
            "--stream/--no-stream",
            help="Send each agent's batches over one long-lived stream (default) or "
            "one Exchange call each.",
        ),
    ] = True,
    speculate: Annotated[
        bool,
        typer.Option(
            "--speculate/--no-speculate",
            help="On a route that committed before, send each domain a Prep of the likely "
            "split with its ReqOffers: two rounds instead of three when the offers agree.",
        ),
    ] = True,
    linger_ms: Annotated[
        float,
        typer.Option(
            "--batch-linger-ms",
            help="How long a batch may wait for other negotiations' messages (0: never).",
        ),
    ] = BATCH_LINGER * 1000,
    advertise: Annotated[
        str | None,
        typer.Option(
            "--advertise",
            help="host:port agents use to ask for decisions (default: the --listen address).",
        ),
    ] = None,
    topology: Annotated[
        Path | None,
        typer.Option(
            "--topology",
            "-t",
            help="A single multi-domain file: its agents' addresses (and their parts "
            "until they answer). Without it, give --agent.",
        ),
    ] = None,
    agents: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            help="host:port of a domain agent (repeat it); the domain graph is built "
            "from the views the agents publish.",
        ),
    ] = None,
    refresh: Annotated[
        float,
        typer.Option("--refresh", help="Seconds between asking the agents for their views."),
    ] = REFRESH_PERIOD,
    tls_cert: CertOpt = None,
    tls_key: KeyOpt = None,
    tls_ca: CaOpt = None,
    peer_token_file: Annotated[
        Path | None,
        typer.Option(
            "--peer-token-file",
            help="File holding the bearer token agents with a peer policy know this "
            "orchestrator by (sent with every call to an agent; use it over TLS).",
        ),
    ] = None,
    database: Annotated[
        str | None,
        typer.Option(
            "--database",
            help="The store of `braid token create` (SQLAlchemy URL, e.g. sqlite:///braid.db): "
            "callers may present its tokens, as on the REST API.",
        ),
    ] = None,
    operator_subjects: Annotated[
        list[str] | None,
        typer.Option(
            "--operator-subject",
            help="A client certificate name (common name or SAN) whose caller is an "
            "operator (repeat it); other certificates' callers are users named by them.",
        ),
    ] = None,
    insecure: InsecureOpt = False,
    cpu: CpuOpt = None,
) -> None:
    """Negotiate multi-domain reservations with the agents (Orchestrator gRPC service).

    Callers must authenticate: a token of `braid token create` (--database) or a client
    certificate (--tls-cert/--tls-key/--tls-ca); --insecure serves it open."""
    level = _sync_level(sync)
    _pin(cpu)
    from braid.adapters.listening import AddressInUseError

    tls = _tls(tls_cert, tls_key, tls_ca)
    mutual = tls is not None and tls.cert is not None and tls.ca is not None
    require_credentials(
        "braid orchestrator",
        mutual or database is not None,
        insecure,
        "--database URL (its braid tokens) or --tls-cert/--tls-key/--tls-ca",
    )
    from braid.adapters.rpc.channels import read_token
    from braid.app.negotiation.config import OrchestratorConfig
    from braid.app.negotiation.results import check_strategy
    from braid.app.orchestrator_access import Identities
    from braid.bootstrap.orchestrator import serve_orchestrator, start_negotiation
    from braid.bootstrap.serve import StoreUnavailableError, close_store, open_store

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    try:
        tokens = open_store(database) if database is not None else None
    except StoreUnavailableError as exc:
        fail(f"--database: {exc}")
    identities = Identities(
        tokens,
        operators=operator_subjects or (),
        open=not mutual and tokens is None,
    )
    try:
        chosen = check_strategy(strategy) or STRATEGY
        config = OrchestratorConfig(chosen, max_paths, hold, speculate)
        if refresh <= 0:
            fail("--refresh: must be more than 0 seconds")
        token = read_token(peer_token_file) if peer_token_file is not None else None
        runtime = start_negotiation(
            topology,
            store,
            agents=agents or (),
            refresh_period=refresh,
            config=config,
            timeout=timeout,
            tls=tls,
            synchronous=level,
            parallel=parallel,
            batch=batch,
            stream=stream,
            linger=linger_ms / 1000,
            token=token,
            finish_now=False,
        )
        if tokens is not None:
            runtime.closers.append(lambda: close_store(tokens))
        serve_orchestrator(
            runtime, listen, identities=identities, owners=store, tls=tls, advertise=advertise or ""
        )
    except AddressInUseError as exc:
        runtime.close()
        fail_in_use(exc, "--listen")
    except (BraidError, OSError, ValueError) as exc:
        fail(str(exc))
    settle_heap(_YOUNG_OBJECTS)
    typer.echo(
        f"braid orchestrator listening on port {runtime.port} "
        f"({runtime.recovered} in-doubt transactions finished, "
        f"{len(runtime.graph.heard)} of {len(runtime.graph.addresses)} domains heard from)"
    )
    _wait_for_signal()
    runtime.close()
    typer.echo("braid orchestrator stopped")


app = typer.Typer(add_completion=False, no_args_is_help=True)
app.command("agent")(agent)
app.command("orchestrator")(orchestrator)

if __name__ == "__main__":
    app()
