"""One domain agent put together: its holds file, its service, its gRPC server (`braid agent`)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from braid.adapters.domain_files import load_multidomain
from braid.adapters.negotiation.hold_store import SqliteHoldStore
from braid.adapters.peer_policy_files import load_peer_policy
from braid.adapters.rpc.channels import AioServer, TlsFiles, start_aio_server
from braid.adapters.rpc.decision_client import GrpcDecisionSource
from braid.adapters.rpc.faults import servicer_for
from braid.adapters.rpc.v1 import negotiation_pb2_grpc as pb_grpc
from braid.app.agent.service import AgentService
from braid.app.negotiation.defaults import MAX_HOLD_SECONDS
from braid.app.provisioning.runner import ProvisioningLoop
from braid.bootstrap.agent_southbound import start_agent_provisioning
from braid.core.negotiation.peers import Peer, PeerPolicy, check_vlan_links

log = logging.getLogger(__name__)


@dataclass
class AgentHandle:
    service: AgentService
    server: AioServer
    port: int
    _stop: threading.Event
    _sweeper: threading.Thread
    _decisions: GrpcDecisionSource
    provisioning: ProvisioningLoop | None = None  # with --southbound: its switches' loop

    def stop(self, grace: float = 1.0) -> None:
        self._stop.set()
        self.server.stop(grace)
        if self.provisioning is not None:
            self.provisioning.stop()
        self._sweeper.join(timeout=5)
        self._decisions.close()
        self.service.store.close()


def token_policy(token: str | None) -> PeerPolicy | None:
    """The policy of `--peer-token-file`: one peer, known by the token, without limits."""
    if token is None:
        return None
    return PeerPolicy({TOKEN_PEER: Peer(TOKEN_PEER, token=token)})


TOKEN_PEER = "orchestrator"  # the peer `--peer-token-file` names, as refusals say it


def start_agent(
    topology: Path,
    domain: str,
    store: Path,
    *,
    listen: str | None = None,
    tls: TlsFiles | None = None,
    max_hold_seconds: int = MAX_HOLD_SECONDS,
    sweep_seconds: float = 1.0,
    southbound: Path | None = None,
    provision_lead: int = 5,
    enforce_rates: bool = True,
    policy: Path | None = None,
    synchronous: str = "FULL",
    token: str | None = None,
) -> AgentHandle:
    """Serve `domain` of the multi-domain `topology`, with holds kept in `store`; with a
    `southbound` wiring file, install committed rules on the domain's own switches; with
    a `policy` file, only its peers may negotiate, within their limits; with a `token`
    instead, only callers that present it, without limits; `synchronous` is the hold
    store's SQLite level (FULL: every vote, commit and release on disk first)."""
    domains = load_multidomain(topology)
    if policy is not None and token is not None:
        raise ValueError(
            "--peer-token-file: with --policy, name each peer's token in the policy (token_file)"
        )
    peers = load_peer_policy(policy) if policy is not None else token_policy(token)
    if peers is not None:  # before the store is opened: a bad policy changes nothing
        owned = {k: link.vlans for k, link in domains.view.links.items() if link.owner == domain}
        check_vlan_links(peers, owned, f"{policy}: peers")
    spec = domains.view.require_domain(domain, "--domain")
    address = listen or spec.agent
    if not address:
        raise ValueError(f"--listen: domain {domain} has no agent address in {topology}")
    decisions = GrpcDecisionSource(tls=tls)
    service = AgentService(
        domains,
        domain,
        SqliteHoldStore(store, synchronous=synchronous),
        max_hold_seconds=max_hold_seconds,
        decisions=decisions,
        policy=peers,
    )
    if peers is None:
        log.warning(
            "agent %s has no peer policy (--policy): any caller%s may reserve in this domain",
            domain,
            " with a certificate from the CA" if tls is not None and tls.ca is not None else "",
        )
    loop = None
    if southbound is not None:  # before serving: a bad wiring file stops the agent at once
        loop = start_agent_provisioning(
            domains, service, southbound, lead=provision_lead, enforce=enforce_rates
        )
    server = start_aio_server(
        [(pb_grpc.add_DomainAgentServicer_to_server, servicer_for(service))], address, tls=tls
    )
    stop = threading.Event()

    def ask() -> None:
        # At once (holds restored from the store may have been decided meanwhile),
        # then every `sweep_seconds` for prepared holds past their hold time.
        while True:
            try:
                service.resolve_overdue()
            except Exception:  # keep asking later; a dead thread would strand holds
                log.exception("asking coordinators for decisions failed")
            if stop.wait(sweep_seconds):
                return

    sweeper = threading.Thread(target=ask, name=f"braid-agent-{domain}-decisions", daemon=True)
    sweeper.start()
    return AgentHandle(service, server, server.port, stop, sweeper, decisions, loop)
