"""The `braid` command line."""

from __future__ import annotations

import typer

from braid.cli import plan_cmd, topology_cmd

app = typer.Typer(
    name="braid",
    help="Guaranteed-bandwidth, multi-path, multi-domain connections for science networks.",
    no_args_is_help=True,
    add_completion=False,
)
app.command("plan")(plan_cmd.plan)
app.command("demo")(plan_cmd.demo)
app.add_typer(topology_cmd.app, name="topology")


if __name__ == "__main__":  # pragma: no cover
    app()
