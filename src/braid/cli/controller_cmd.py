"""`braid controller`: the southbound OpenFlow controller (an os-ken application).

It runs in a process of its own: os-ken owns its event loop, and braid talks
to it over a small local HTTP API (see docs/southbound.md).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from braid.cli.common import fail

API_HELP = "Where braid reaches the controller: HOST:PORT, or unix:PATH (a Unix socket)."
OPENFLOW_HELP = "HOST:PORT on which switches connect (OpenFlow 1.3)."
TOKEN_HELP = (
    "File holding the bearer token that every API request must send (keep it to its "
    "owner: chmod 600). Required unless --insecure."
)
INSECURE_HELP = (
    "Serve the API without a token (a warning at every start): any local user who can "
    "connect may then change the switches' rules. For test benches only."
)
STATE_HELP = (
    "File keeping the desired rule sets across restarts; with it, every switch that "
    "connects is reconciled to it."
)

SERVICE_HELP = (
    "braid serve's URL: a port a switch reports down (or up again) is posted as its link's "
    "state, and the service moves the reservations on it. Needs --service-token-file, "
    "--topology and --wiring."
)


def controller(
    api: Annotated[str, typer.Option("--api", help=API_HELP)] = "127.0.0.1:7300",
    openflow: Annotated[str, typer.Option("--openflow", help=OPENFLOW_HELP)] = "127.0.0.1:6653",
    state: Annotated[Path | None, typer.Option("--state", help=STATE_HELP)] = None,
    api_token_file: Annotated[
        Path | None, typer.Option("--api-token-file", help=TOKEN_HELP)
    ] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help=INSECURE_HELP)] = False,
    log_level: Annotated[str, typer.Option("--log-level", help="Python log level.")] = "WARNING",
    service: Annotated[str | None, typer.Option("--service", help=SERVICE_HELP)] = None,
    service_token_file: Annotated[
        Path | None,
        typer.Option("--service-token-file", help="File holding a monitor token for --service."),
    ] = None,
    topology: Annotated[
        Path | None, typer.Option("--topology", help="The service's topology file (--service).")
    ] = None,
    wiring: Annotated[
        Path | None, typer.Option("--wiring", help="The switches' wiring file (--service).")
    ] = None,
) -> None:
    """Keep switch connections and install the rule sets braid sends, until Ctrl-C."""
    if importlib.util.find_spec("os_ken") is None:
        fail("os-ken is not installed", "pip install 'braid[controller]'")
    if not api.startswith("unix:") and not api.rpartition(":")[2].isdigit():
        fail(f"--api: expected HOST:PORT or unix:PATH, got {api!r}")
    if not openflow.rpartition(":")[2].isdigit():
        fail(f"--openflow: expected HOST:PORT, got {openflow!r}")
    if api_token_file is None and not insecure:
        fail(
            "the controller's API needs a token: pass --api-token-file FILE",
            "install -m 600 /dev/null FILE; head -c 32 /dev/urandom | base64 > FILE "
            "(braid's driver sends it: drivers.controller.token_file in the wiring file); "
            "--insecure serves without one, on a test bench only",
        )
    command = [
        sys.executable,
        "-m",
        "braid.adapters.southbound.osken_main",
        "--api",
        api,
        "--openflow",
        openflow,
        "--log-level",
        log_level,
        *(["--state", str(state)] if state is not None else []),
        *(["--api-token-file", str(api_token_file)] if api_token_file is not None else []),
        *(["--insecure"] if insecure and api_token_file is None else []),
        *(["--service", service] if service is not None else []),
        *(["--service-token-file", str(service_token_file)] if service_token_file else []),
        *(["--topology", str(topology)] if topology is not None else []),
        *(["--wiring", str(wiring)] if wiring is not None else []),
    ]
    # Replace this process: os-ken must own a fresh interpreter's event loop.
    os.execv(sys.executable, command)
