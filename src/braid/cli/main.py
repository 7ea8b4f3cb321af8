"""The `braid` command line."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from braid.cli import plan_cmd

app = typer.Typer(
    name="braid",
    help="Guaranteed-bandwidth, multi-path, multi-domain connections for science networks.",
    no_args_is_help=True,
    add_completion=True,  # braid --install-completion [bash|zsh|fish]
)


def _print_version(wanted: bool) -> None:
    if wanted:
        from importlib.metadata import version

        typer.echo(f"braid {version('braid')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Guaranteed-bandwidth, multi-path, multi-domain connections for science networks."""


app.command("plan")(plan_cmd.plan)
app.command("example")(plan_cmd.demo)


def _register_the_rest() -> None:
    """Every command but `braid plan`, whose batch runs skip these imports (numpy, httpx, gRPC)."""
    from braid.cli import (
        agent_cmd,
        analyze_cmd,
        client_cmd,
        controller_cmd,
        db_cmd,
        demo_cmd,
        emulate_cmd,
        interdomain_cmd,
        monitor_cmd,
        operator_cmd,
        serve_cmd,
        sim_cmd,
        token_cmd,
        topology_cmd,
    )

    app.command("demo")(demo_cmd.demo)
    app.add_typer(topology_cmd.app, name="topology")
    app.command("serve")(serve_cmd.serve)
    app.add_typer(token_cmd.app, name="token")
    app.add_typer(db_cmd.app, name="db")
    app.add_typer(sim_cmd.app, name="sim")
    # the multi-domain pieces: one agent per domain, the negotiating orchestrator
    app.command("agent")(agent_cmd.agent)
    app.command("orchestrator")(agent_cmd.orchestrator)
    # southbound: keeps switch connections and applies rule sets
    app.command("controller")(controller_cmd.controller)
    app.add_typer(emulate_cmd.app, name="emulate")
    app.add_typer(analyze_cmd.app, name="analyze")
    # a site's fail-over monitor
    app.command("monitor")(monitor_cmd.monitor)
    # REST clients of `braid serve`
    app.command("reserve")(client_cmd.reserve)
    app.command("list")(client_cmd.list_reservations)
    app.command("show")(client_cmd.show)
    app.command("modify")(client_cmd.modify)
    app.command("confirm")(client_cmd.confirm)
    app.command("cancel")(client_cmd.cancel)
    app.command("availability")(client_cmd.availability)
    app.command("audit")(operator_cmd.audit)
    app.command("maintenance")(operator_cmd.maintenance)
    app.command("link-state")(operator_cmd.link_state)
    app.add_typer(operator_cmd.network, name="network")
    app.add_typer(interdomain_cmd.app, name="interdomain")


# Start-up time counts in `braid plan`'s decisions per second.
if sys.argv[1:2] != ["plan"]:
    _register_the_rest()


if __name__ == "__main__":  # pragma: no cover
    app()
