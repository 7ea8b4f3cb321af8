"""Helpers shared by the CLI commands: loading inputs and reporting errors."""

from __future__ import annotations

import gc
import importlib.util
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from braid.adapters.listening import AddressInUseError
from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.model.units import parse_bandwidth

err_console = Console(stderr=True)

# The one flag, on every command that serves a port, that opens it without
# authentication (see `warn_insecure`).
InsecureOpt = Annotated[
    bool,
    typer.Option(
        "--insecure",
        help="Serve without authentication: anyone who reaches the port may use it "
        "(a warning says so at every start). Default: credentials are required.",
    ),
]


def warn_insecure(what: str) -> None:
    """Say, on every start, that `what` (e.g. "the agent's gRPC port 127.0.0.1:7101")
    takes calls from anyone (the operator passed --insecure)."""
    err_console.print(
        f"[bold yellow]warning:[/] --insecure: {escape(what)} accepts calls without "
        "authentication; anyone who reaches it may use it (for test benches only)",
        soft_wrap=True,
    )


def require_credentials(what: str, has_credentials: bool, insecure: bool, options: str) -> None:
    """Stop with a one-line error when `what` would serve with no credentials and no
    --insecure; warn when it serves open on purpose. Credentials given are always in
    force (--insecure beside them changes nothing). `options`: what to pass instead."""
    if has_credentials:
        return
    if not insecure:
        fail(f"{what} needs authentication: pass {options}, or --insecure to serve it open")
    warn_insecure(what)


def fail(message: str, hint: str = "") -> NoReturn:
    # One line however narrow the terminal: the terminal wraps it, grep finds it whole.
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    if hint:
        err_console.print(f"[dim]{escape(hint)}[/]")
    raise typer.Exit(2)


def fail_in_use(exc: AddressInUseError, option: str) -> NoReturn:
    """A server's address is taken: one line (never wrapped) naming it and the option."""
    err_console.print(f"[bold red]error:[/] {escape(exc.advice(option))}", soft_wrap=True)
    raise typer.Exit(2)


def settle_heap(young: int | None = None) -> None:
    """Keep what startup loaded out of the cyclic collector's passes (a long-lived server).

    The store's reservations, the mirror's timelines, an agent's holds and the
    app live as long as the process: every full collection walked them all
    (braid serve: some 330,000 objects with 10,000 bookings, 0.2 s a pass, a
    pass every 10 s or so under load) to find the little garbage made since.
    Frozen objects are still freed once nothing refers to them; only cycles
    among them would stay, and only among what startup built. `young`: collect
    the youngest generation after this many new objects instead of 700 (an
    agent or orchestrator makes and drops many small objects per message, and
    nearly all are gone before a collection looks at them).
    """
    gc.collect()
    gc.freeze()
    if young is not None:
        _, middle, old = gc.get_threshold()
        gc.set_threshold(young, middle, old)


def require_module(module: str, extra: str, option: str) -> None:
    """Fail with the install command when an optional dependency is missing."""
    if importlib.util.find_spec(module) is None:
        fail(
            f"{option} needs the Python package {module!r}, which is not installed",
            f"install braid with it: pip install 'braid[{extra}]'",
        )


def open_topology(path: Path, default_capacity: str | None) -> Topology:
    """Load a topology file or stop with an error that says what to fix."""
    from braid.adapters.topology_files import TopologyFileError, load_topology

    try:
        default = (
            parse_bandwidth(default_capacity, "--default-capacity") if default_capacity else None
        )
        return load_topology(path, default_capacity_bps=default)
    except TopologyFileError as exc:
        fail(str(exc))
    except InputError as exc:
        hint = ""
        if exc.field.endswith(".capacity") and "missing" in exc.message:
            hint = "pass --default-capacity (e.g. --default-capacity 100G) for links without speed"
        fail(f"{path}: {exc}", hint)


def check_tz(value: str | None) -> str | None:
    """--tz (or BRAID_TZ): an IANA zone name, checked before any instant is read."""
    from braid.core.model.local_time import check_zone

    try:
        return check_zone(value, "--tz")
    except InputError as exc:
        raise typer.BadParameter(exc.message) from exc


# The zone input instants are read in and tables show times in; UTC without it.
TzOpt = Annotated[
    str | None,
    typer.Option(
        "--tz",
        envvar="BRAID_TZ",
        # Eager: read before the instant options, whose callbacks read them in this zone.
        is_eager=True,
        callback=check_tz,
        help="IANA time zone (e.g. Europe/Paris) to read local times in and show times in. "
        "Default: UTC for what is shown; local times without a zone go to the server as "
        "given, which reads them in your tz setting.",
        show_default=False,
    ),
]


def relative_instant(
    ctx: typer.Context, param: typer.CallbackParam, value: str | None
) -> str | None:
    """An instant option as the server takes it: ISO 8601 in UTC when it reads here
    (with an offset or zone, `now+1h`, `friday 17:00` in --tz); a local time this side
    cannot place (no --tz) goes as given, for the server's tz setting of the user."""
    import time

    option = "--" + (param.name or "instant").replace("_", "-")
    zone = ctx.params["tz"] if "tz" in ctx.params else check_tz(_env_tz())
    return cli_instant(value, option, zone, int(time.time()))


def cli_instant(value: str | None, option: str, zone: str | None, now: int) -> str | None:
    """`relative_instant`'s reading, with the zone and the clock passed in."""
    if value is None:
        return None
    from braid.core.model.instants import format_instant, parse_instant

    try:
        return format_instant(parse_instant(value, option, zone=zone, now=now))
    except InputError as exc:
        if zone is None and "no time zone" in exc.message:
            return value  # the user's tz setting on the server may place it
        raise typer.BadParameter(exc.message) from exc


def _env_tz() -> str | None:
    import os

    return os.environ.get("BRAID_TZ") or None


def shown_zone(tz: str | None) -> str:
    """What a table says its times are in."""
    return f"times in {tz}" if tz else "times in UTC"
