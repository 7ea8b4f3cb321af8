"""`braid audit | maintenance | link-state | network`: the operators' REST calls, from a shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from braid.cli import client_views as views
from braid.cli.client import DEFAULT_URL
from braid.cli.client_cmd import (
    CaCertOpt,
    IdArg,
    Instant,
    JsonOpt,
    Text,
    TokenOpt,
    UrlOpt,
    call_api,
    given_fields,
    show_answer,
)
from braid.cli.common import TzOpt, fail

network = typer.Typer(help="The topology `braid serve` works on: show it, replace it.")


def audit(
    reservation_id: IdArg,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """Every change to a reservation: who, when, from which state to which."""
    entries = call_api(url, token, cacert, as_json, lambda b: b.audit(reservation_id))
    if as_json:
        typer.echo(json.dumps({"entries": entries}, indent=2))
    else:
        Console().print(views.audit(entries, tz))


def maintenance(
    start: Instant = None,
    end: Instant = None,
    link: Text = None,
    node: Text = None,
    reason: Text = None,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """Take a link or a node out for a window (operators); bookings on it are re-routed."""
    if (link is None) == (node is None):
        fail("give --link or --node (one of them)")
    body = given_fields(link=link, node=node, start=start, end=end, reason=reason)
    done = call_api(url, token, cacert, as_json, lambda b: b.maintenance(body))
    show_answer(done, as_json, views.maintenance, tz)


def link_state(
    link: Annotated[str, typer.Argument(help="A link id, as in `braid network show --json`.")],
    state: Annotated[str, typer.Argument(help="up or down.")],
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Say a link is up or down (operators, monitors); its reservations fail over or back."""
    done = call_api(url, token, cacert, as_json, lambda b: b.link_state(link, state))
    show_answer(done, as_json, views.link_state)


@network.command("show")
def show_network(
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The current topology version (with --json: the whole normalised topology)."""
    show_answer(
        call_api(url, token, cacert, as_json, lambda b: b.topology()), as_json, views.topology
    )


@network.command("replace")
def replace_network(
    topology: Annotated[Path, typer.Argument(help="A topology file (YAML/JSON, GraphML, OSCARS).")],
    force: Annotated[
        bool, typer.Option("--force", help="Store it even if bookings no longer fit; they fail.")
    ] = False,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store a new topology version (operators); refused if bookings would no longer fit."""
    from braid.bootstrap.serve import initial_topology

    data = initial_topology(topology, None)
    answer = call_api(url, token, cacert, as_json, lambda b: b.replace_topology(data, force=force))
    if as_json:
        typer.echo(json.dumps(answer, indent=2))
        return
    typer.echo(f"topology version {answer.get('version')}")
    for misfit in answer.get("failed") or []:
        typer.echo(f"  no longer fits, failed: {misfit}")
