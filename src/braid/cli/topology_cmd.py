"""`braid topology …`: inspect and export topologies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from braid.cli.common import open_topology
from braid.core.model.topology import topology_to_dict
from braid.core.model.units import format_bandwidth

app = typer.Typer(help="Inspect and export topologies.", no_args_is_help=True)

TopologyOpt = Annotated[
    Path, typer.Option("--topology", "-t", help="YAML/JSON, Topology Zoo GraphML or OSCARS JSON.")
]
DefaultCapacityOpt = Annotated[
    str | None,
    typer.Option("--default-capacity", help="Capacity of links whose speed is unknown, e.g. 100G."),
]


@app.command("export")
def export(topology: TopologyOpt, default_capacity: DefaultCapacityOpt = None) -> None:
    """Print the normalised topology as JSON (link ids, capacities in Mbit/s, latencies)."""
    model = open_topology(topology, default_capacity)
    typer.echo(json.dumps(topology_to_dict(model), indent=2))


@app.command("show")
def show(
    topology: TopologyOpt,
    default_capacity: DefaultCapacityOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Summarise a topology: nodes, links, capacities, domains."""
    model = open_topology(topology, default_capacity)
    capacities = [link.capacity for link in model.links.values()]
    summary = {
        "nodes": len(model.nodes),
        "links": len(model.links),
        "domains": len(model.domains),
        "min_capacity": format_bandwidth(min(capacities)) if capacities else "-",
        "max_capacity": format_bandwidth(max(capacities)) if capacities else "-",
        "parallel_links": len(capacities)
        - len({frozenset((k.a, k.b)) for k in model.links.values()}),
    }
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    table = Table(title=str(topology.name))
    table.add_column("what")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        table.add_row(key.replace("_", " "), str(value))
    Console().print(table)


@app.command("wiring")
def wiring(
    topology: TopologyOpt,
    default_capacity: DefaultCapacityOpt = None,
    driver: Annotated[
        str, typer.Option("--driver", help="direct (ovs-ofctl) or controller.")
    ] = "direct",
) -> None:
    """Print a wiring file to start from for `braid serve --southbound` (edit the ports)."""
    import yaml

    from braid.adapters.wiring_files import wiring_skeleton
    from braid.cli.common import fail
    from braid.core.errors import InputError

    model = open_topology(topology, default_capacity)
    try:
        data = wiring_skeleton(model, driver)
    except InputError as exc:
        fail(f"--{exc.field}: {exc.message}")
    typer.echo(yaml.safe_dump(data, sort_keys=False), nl=False)


@app.command("split")
def split(
    topology: Annotated[Path, typer.Option("--topology", "-t", help="A single multi-domain file.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the domains' files.")],
) -> None:
    """Write each domain's own topology file (`OUT/DOMAIN.yaml`) for `braid agent -t`.

    Each holds its domain, its nodes and inside links, and its border links
    with their far ends; no file holds another domain's insides.
    """
    from braid.adapters.domain_files import load_multidomain, write_domain_files
    from braid.cli.common import fail
    from braid.core.errors import BraidError

    try:
        written = write_domain_files(load_multidomain(topology), out)
    except (BraidError, OSError) as exc:
        fail(str(exc))
    for domain, path in written.items():
        typer.echo(f"{domain}\t{path}")
