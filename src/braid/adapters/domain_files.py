"""Multi-domain topology files: the orchestrator's global view and each agent's own part.

The file is braid's topology format (YAML or JSON) with a `domains` list, a
`domain` on every node, and, on links between two domains, a `vlans` range
and optionally an `owner`. The whole file is validated as a topology first
(so errors in nodes and links read as they do everywhere else), then as a
multi-domain network.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from braid.adapters.topology_files import read_topology_dict
from braid.core.model.topology import Topology, topology_from_dict
from braid.core.negotiation.domains import (
    GlobalView,
    domain_topology_dict,
    global_view_from_dict,
    points_of,
    strip_domain_keys,
)


@dataclass(frozen=True)
class MultiDomainFile:
    path: Path
    data: dict[str, Any]
    view: GlobalView

    def domain_topology(self, domain: str) -> Topology:
        """What `domain`'s agent schedules: its inside plus the inter-domain links it owns."""
        return topology_from_dict(domain_topology_dict(self.data, self.view, domain))

    def points(self, domain: str) -> frozenset[str]:
        return points_of(self.data, domain)


def load_multidomain(path: Path) -> MultiDomainFile:
    """Read and validate a multi-domain topology file; errors name the file and field."""
    data = read_topology_dict(Path(path))
    topology_from_dict(strip_domain_keys(data))
    return MultiDomainFile(Path(path), data, global_view_from_dict(data))
