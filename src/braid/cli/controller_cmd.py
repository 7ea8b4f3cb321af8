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
    "File holding a bearer token that every API request must send (keep it to its "
    "owner: chmod 600). Without it, any local user who can connect may use the API."
)
STATE_HELP = (
    "File keeping the desired rule sets across restarts; with it, every switch that "
    "connects is reconciled to it."
)


def controller(
    api: Annotated[str, typer.Option("--api", help=API_HELP)] = "127.0.0.1:7300",
    openflow: Annotated[str, typer.Option("--openflow", help=OPENFLOW_HELP)] = "127.0.0.1:6653",
    state: Annotated[Path | None, typer.Option("--state", help=STATE_HELP)] = None,
    api_token_file: Annotated[
        Path | None, typer.Option("--api-token-file", help=TOKEN_HELP)
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="Python log level.")] = "WARNING",
) -> None:
    """Keep switch connections and install the rule sets braid sends, until Ctrl-C."""
    if importlib.util.find_spec("os_ken") is None:
        fail("os-ken is not installed", "pip install 'braid[controller]'")
    if not api.startswith("unix:") and not api.rpartition(":")[2].isdigit():
        fail(f"--api: expected HOST:PORT or unix:PATH, got {api!r}")
    if not openflow.rpartition(":")[2].isdigit():
        fail(f"--openflow: expected HOST:PORT, got {openflow!r}")
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
    ]
    # Replace this process: os-ken must own a fresh interpreter's event loop.
    os.execv(sys.executable, command)
