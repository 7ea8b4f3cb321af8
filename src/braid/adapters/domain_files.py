"""Multi-domain topology files: the orchestrator's global view and each agent's own part.

The file is braid's topology format (YAML or JSON) with a `domains` list, a
`domain` on every node, and, on links between two domains, a `vlans` range
and optionally an `owner`. The whole file is validated as a topology first
(so errors in nodes and links read as they do everywhere else), then as a
multi-domain network.
"""

from __future__ import annotations

from pathlib import Path

from braid.adapters.topology_files import read_topology_dict
from braid.core.model.topology import topology_from_dict
from braid.core.negotiation.domains import (
    MultiDomainNetwork,
    global_view_from_dict,
    strip_domain_keys,
)


def load_multidomain(path: Path) -> MultiDomainNetwork:
    """Read and validate a multi-domain topology file; errors name the file and field."""
    data = read_topology_dict(Path(path))
    topology_from_dict(strip_domain_keys(data))
    return MultiDomainNetwork(str(path), data, global_view_from_dict(data))
