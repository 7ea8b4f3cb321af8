"""Multi-domain topology files: a single file of every domain, or one domain's own file.

The file is braid's topology format (YAML or JSON) with a `domains` list, a
`domain` on every node, and, on links between two domains, a `vlans` range
and optionally an `owner`. The whole file is validated as a topology first
(so errors in nodes and links read as they do everywhere else), then as a
multi-domain network. A domain's own file has the same form, cut down to its
domain, its nodes and links, and the far ends of its border links (nodes of
the neighbours, named with their domains).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from braid.adapters.topology_files import read_topology_dict
from braid.core.model.topology import topology_from_dict
from braid.core.negotiation.domains import (
    MultiDomainNetwork,
    global_view_from_dict,
    strip_domain_keys,
)
from braid.core.negotiation.published import domain_file_dict


def load_multidomain(path: Path) -> MultiDomainNetwork:
    """Read and validate a multi-domain topology file; errors name the file and field."""
    data = read_topology_dict(Path(path))
    topology_from_dict(strip_domain_keys(data))
    return MultiDomainNetwork(str(path), data, global_view_from_dict(data))


def write_domain_files(network: MultiDomainNetwork, out: Path) -> dict[str, Path]:
    """Write each domain's own file (`<domain>.yaml`) into `out`; each is read back and checked."""
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for domain in network.view.domains:
        path = out / f"{domain}.yaml"
        text = yaml.safe_dump(domain_file_dict(network, domain), sort_keys=False)
        path.write_text(text, encoding="utf-8")
        load_multidomain(path)
        written[domain] = path
    return written
