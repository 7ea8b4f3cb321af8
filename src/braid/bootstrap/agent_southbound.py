"""A domain agent's own southbound: its wiring file, drivers and provisioning loop.

`braid agent --southbound WIRING` reads a wiring file (the format of
`braid serve --southbound`; hosts optional) naming this domain's switches,
and installs every committed transaction's rules on them through the
provisioning passes `braid serve` uses.
"""

from __future__ import annotations

from pathlib import Path

from braid.adapters.southbound.fleet import DriverTables
from braid.adapters.wiring_files import SouthboundConfig, load_wiring
from braid.app.agent.provisioning import AgentPlans
from braid.app.agent.service import AgentService
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.ports import SwitchTables
from braid.app.provisioning.provisioner import RulesProvisioner
from braid.app.provisioning.runner import ProvisioningLoop
from braid.bootstrap.provisioning import drivers_for
from braid.core.errors import InputError
from braid.core.model.topology import topology_from_dict
from braid.core.negotiation.domain_rules import LAN, SwitchWiring, abstract_ports
from braid.core.negotiation.domains import MultiDomainNetwork, strip_domain_keys

__all__ = ["agent_plans", "start_agent_provisioning"]


def agent_plans(
    domains: MultiDomainNetwork,
    service: AgentService,
    config: SouthboundConfig,
    *,
    enforce: bool = True,
) -> AgentPlans:
    """The agent's plan source for the switches `config` wires; `enforce` False: the rules
    only route, whatever rates and policing the plans carry."""
    view = domains.view
    switches = {}
    for node, ports in config.ports.switches.items():
        real = dict(ports.link_ports)
        inside = [link for link in real if link not in view.links]
        host = config.host_at.get(node)
        if len(inside) == 1:
            real[LAN] = real[inside[0]]  # an edge faces its site through its one inside link
        elif host is not None:
            real[LAN] = config.ports.hosts[host].port
        capacities = {link: view.links[link].capacity for link in real if link in view.links}
        switches[node] = SwitchWiring(node, ports.dpid, real, capacities)
    return AgentPlans(service, switches, abstract_ports(view, service.domain), enforce=enforce)


def start_agent_provisioning(
    domains: MultiDomainNetwork,
    service: AgentService,
    wiring: Path,
    *,
    lead: int = 5,
    enforce: bool = True,
    tick: float = 1.0,
    reconcile_every: float = 30.0,
    tables: SwitchTables | None = None,
) -> ProvisioningLoop:
    """A running loop that keeps this domain's switches holding its committed rules."""
    whole = topology_from_dict(strip_domain_keys(domains.data))
    config = load_wiring(wiring, whole, hosts=False)
    outside = sorted(n for n in config.ports.switches if n not in domains.points(service.domain))
    if outside:
        raise InputError(f"{wiring}: switches", f"{outside[0]} is not in domain {service.domain}")
    if tables is None:
        dpids = {s: p.dpid for s, p in config.ports.switches.items()}
        tables = DriverTables(drivers_for(config), dpids)
    provisioner = RulesProvisioner(
        agent_plans(domains, service, config, enforce=enforce),
        MemoryProvisioningStore(),
        tables,
        holder=f"agent-{service.domain}",
        lead=lead,
    )
    loop = ProvisioningLoop(provisioner, service.now, tick=tick, reconcile_every=reconcile_every)
    service.on_change.append(loop.wake)
    loop.start()
    return loop
