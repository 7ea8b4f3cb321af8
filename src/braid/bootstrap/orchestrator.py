"""Wire the orchestrator to real agents and its decision log (what `braid serve` calls).

    runtime = start_negotiation(Path("net.yaml"), Path("decisions.db"))
    result = runtime.orchestrator.reserve(NegotiationRequest(...))
    runtime.close()

Starting finishes every transaction left in doubt by a previous run (the
decision is re-sent) and keeps a background finisher for agents that are
down for a while.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from braid.adapters.domain_files import load_multidomain
from braid.adapters.negotiation.decision_log import SqliteDecisionLog
from braid.adapters.negotiation.nsi_book import SqliteConnectionBook
from braid.adapters.negotiation.owner_book import SqliteOwnerBook
from braid.adapters.nsi.provider_client import SoapProvider
from braid.adapters.rpc.agent_client import GrpcAgentPool
from braid.adapters.rpc.channels import TlsFiles, start_aio_server
from braid.adapters.rpc.view_source import GrpcViewSource
from braid.app.interdomain import InterdomainService
from braid.app.negotiation.config import OrchestratorConfig
from braid.app.negotiation.defaults import BATCH_LINGER, CALL_TIMEOUT, REFRESH_PERIOD
from braid.app.negotiation.delivery import Finisher
from braid.app.negotiation.domain_graph import DomainGraph, Listener
from braid.app.negotiation.negotiator import Orchestrator
from braid.app.negotiation.results import NegotiationResult, TraceEvent
from braid.app.negotiation.routing import RoutedPool
from braid.app.nsi.participant import NsiParticipants
from braid.app.orchestrator_access import Identities, OwnedOrchestrator
from braid.app.periodic import Periodic
from braid.core.errors import InputError
from braid.core.negotiation.domains import MultiDomainNetwork, nsi_peers
from braid.core.negotiation.published import DomainPart, MergedView, domain_part
from braid.core.negotiation.transaction import Decision, Transaction
from braid.core.policy import Policy

# Fault injection for the fault tests: "exit-after-decide" kills the process
# right after a decision became durable, before any participant heard it;
# "exit-before-prep" once a transaction is logged, before its first Prep;
# "exit-before-release" once a modify's new version is committed everywhere,
# before the old version's release (decided with it) leaves.
FAULT_VARIABLE = "BRAID_FAULT_ORCHESTRATOR"


@dataclass
class NegotiationRuntime:
    orchestrator: Orchestrator
    recovered: int
    _pool: GrpcAgentPool
    _decisions: SqliteDecisionLog
    _finisher: Finisher
    graph: DomainGraph
    _views: GrpcViewSource
    _refresher: Periodic
    _nsi: NsiParticipants | None = None
    server: Any = None
    port: int = 0
    # What the gRPC front needs closed after the server (owners, the token store).
    closers: list[Callable[[], None]] = field(default_factory=list)

    @property
    def coordinator(self) -> str:
        return self._pool.coordinator

    @coordinator.setter
    def coordinator(self, address: str) -> None:
        self._pool.coordinator = address

    @property
    def streams_loop(self) -> asyncio.AbstractEventLoop | None:
        return self._pool.streams_loop

    def close(self) -> None:
        if self.server is not None:
            self.server.stop(1.0)
        for close in self.closers:
            close()
        self._refresher.stop()
        self._finisher.stop()
        self._views.close()
        self._pool.close()
        if self._nsi is not None:
            self._nsi.close()
        self._decisions.close()


def start_negotiation(
    topology: Path | None,
    decisions: Path,
    *,
    agents: Sequence[str] = (),
    config: OrchestratorConfig | None = None,
    timeout: float = CALL_TIMEOUT,
    tls: TlsFiles | None = None,
    synchronous: str = "FULL",
    finish_period: float = 1.0,
    refresh_period: float = REFRESH_PERIOD,
    parallel: bool = True,
    batch: bool = True,
    linger: float = BATCH_LINGER,
    token: str | None = None,
    stream: bool = True,
    finish_now: bool = True,
) -> NegotiationRuntime:
    """Negotiate over the domain graph the agents publish (at `agents`, and at the
    addresses a single `topology` file gives, whose parts stand in for an agent
    until it first answers); asked again every `refresh_period` seconds. `token`:
    the bearer token agents with a peer policy know this orchestrator by.
    `finish_now=False`: the decisions recovered are re-sent by `serve_orchestrator`,
    once agents can ask it for them (an agent commits only what its coordinator
    says was decided)."""
    graph, source, network = _domain_graph(topology, agents, timeout=timeout, tls=tls, token=token)
    pool = GrpcAgentPool(
        {d: a for d, a in graph.addresses.items() if a},
        timeout=timeout,
        tls=tls,
        parallel=parallel,
        batch=batch,
        linger=linger,
        stream=stream,
        token=token,
    )
    log = SqliteDecisionLog(decisions, synchronous=synchronous)
    nsi = _nsi_participants(network, decisions, synchronous)
    routed = pool if nsi is None else RoutedPool(pool, dict.fromkeys(nsi.peers, nsi))
    orchestrator = Orchestrator(graph.merged.view, routed, log, config)
    graph.listeners.append(_follower(orchestrator, pool))
    fault = os.environ.get(FAULT_VARIABLE, "")
    if fault == "exit-after-decide":
        orchestrator.hooks.after_decide = _exit_now
    elif fault == "exit-before-prep":
        orchestrator.hooks.before_prep = _exit_now
    elif fault == "exit-before-release":  # a modify's new version committed, old not released
        orchestrator.hooks.before_release = _exit_now
    recovered = orchestrator.delivery.recover()
    for tx in recovered:
        _record_recovered(log, tx)
    if recovered and finish_now:
        orchestrator.delivery.finish()
    finisher = Finisher(orchestrator.delivery, finish_period)
    finisher.start()
    refresher = Periodic(graph.refresh, refresh_period, "braid-domain-graph")
    refresher.start()
    return NegotiationRuntime(
        orchestrator, len(recovered), pool, log, finisher, graph, source, refresher, nsi
    )


def _nsi_participants(
    network: MultiDomainNetwork | None, decisions: Path, synchronous: str
) -> NsiParticipants | None:
    """The NSI domains of the topology file, reached as braid's NSI requester (or None)."""
    peers = nsi_peers(network.view) if network is not None else {}
    if not peers:
        return None
    assert network is not None
    ends = {d: network.view.nsi_ends(d) for d in peers}
    book = SqliteConnectionBook(decisions, synchronous=synchronous)
    return NsiParticipants(peers, ends, SoapProvider(), book)


def _domain_graph(
    topology: Path | None,
    agents: Sequence[str],
    *,
    timeout: float,
    tls: TlsFiles | None,
    token: str | None = None,
) -> tuple[DomainGraph, GrpcViewSource, MultiDomainNetwork | None]:
    """The graph as the agents publish it now (a file's parts for those who do not answer;
    an NSI domain's part always comes from the file: no agent publishes it)."""
    seed: dict[str, tuple[str, DomainPart]] = {}
    network = None
    if topology is not None:
        network = load_multidomain(topology)
        seed = {
            d: (spec.agent or "", domain_part(network, d))
            for d, spec in network.view.domains.items()
        }
    addresses = [*agents, *(address for address, _ in seed.values() if address)]
    if not addresses:
        raise InputError("--agent", "no agent to ask: give --agent HOST:PORT (or a --topology)")
    source = GrpcViewSource(addresses, timeout=timeout, tls=tls, token=token)
    graph = DomainGraph(source, seed)
    graph.refresh()
    return graph, source, network


def _follower(orchestrator: Orchestrator, pool: GrpcAgentPool) -> Listener:
    def follow(merged: MergedView, addresses: Mapping[str, str]) -> None:
        for domain, address in addresses.items():
            if address:
                pool.connect(domain, address)
        orchestrator.update_view(merged.view)

    return follow


def _exit_now(tx: Transaction) -> None:
    os._exit(70)


def _record_recovered(log: SqliteDecisionLog, tx: Transaction) -> None:
    """A reservation whose answer was lost in the crash gets one from the log (a decision
    is written with its whole result, so this finds only those never decided — and
    committed ones of logs written before results went with decisions)."""
    if tx.label or log.result(tx.reservation) is not None:
        return
    committed = tx.decision is Decision.COMMIT
    result = NegotiationResult(
        tx.reservation,
        committed,
        "" if committed else f"aborted: {tx.reason}",
        tx.id,
        trace=(
            TraceEvent(
                "recover",
                "",
                f"{tx.decision.value if tx.decision else 'abort'}: finished after a restart",
            ),
        ),
    )
    log.save_result(tx.reservation, result.to_dict())


def serve_orchestrator(
    runtime: NegotiationRuntime,
    listen: str,
    *,
    identities: Identities,
    owners: Path,
    tls: TlsFiles | None = None,
    advertise: str = "",
) -> NegotiationRuntime:
    """Also expose the orchestrator over gRPC (the Orchestrator service): `identities`
    names its callers, `owners` (a SQLite file, the decision log's) keeps who asked for
    which reservation."""
    from braid.adapters.rpc.orchestrator_servicer import OrchestratorServicer
    from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc

    book = SqliteOwnerBook(owners)
    runtime.closers.append(book.close)
    owned = OwnedOrchestrator(runtime.orchestrator, book)
    servicer = OrchestratorServicer(runtime.orchestrator, owned, identities)
    # On the agents' streams' loop, where there is one: a negotiation's calls to agents
    # and their answers then never leave that thread.
    runtime.server = start_aio_server(
        [(pb_grpc.add_OrchestratorServicer_to_server, servicer)],
        listen,
        tls=tls,
        loop=runtime.streams_loop,
    )
    runtime.port = runtime.server.port
    # Agents ask here for decisions they missed; every Prep from now on says where.
    host = (advertise or listen).rpartition(":")[0]
    runtime.coordinator = advertise or f"{host}:{runtime.port}"
    if runtime.recovered:  # now that agents can ask for the decisions (idempotent)
        runtime.orchestrator.delivery.finish()
    return runtime


def open_interdomain(
    domains: Path,
    negotiation_db: Path,
    *,
    config: OrchestratorConfig | None = None,
    timeout: float = CALL_TIMEOUT,
    policy: Policy | None = None,
    token: str | None = None,
) -> InterdomainService:
    """Start the negotiation runtime on a topology with a `domains` section (for `braid serve`).

    Raises InputError (naming the file's field) on a bad file or one without domains.
    """
    runtime = start_negotiation(
        domains, negotiation_db, config=config, timeout=timeout, token=token
    )
    if not runtime.orchestrator.view.domains:
        runtime.close()
        raise InputError("domains", f"{domains} has no domains section")
    try:
        owners = SqliteOwnerBook(negotiation_db)
    except sqlite3.Error:
        runtime.close()
        raise
    service = InterdomainService(
        runtime.orchestrator,
        owners,
        on_close=runtime.close,
        policy=policy,
        points=runtime.graph.merged.points,
    )

    def follow(merged: MergedView, addresses: Mapping[str, str]) -> None:
        service.points = dict(merged.points)

    runtime.graph.listeners.append(follow)
    return service
