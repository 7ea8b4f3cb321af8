"""Entry point of the `braid controller` process: os-ken plus the local HTTP API.

Run as `python -m braid.adapters.southbound.osken_main --api 127.0.0.1:7300
--openflow 127.0.0.1:6653`; with `--service URL --service-token-file FILE
--topology FILE --wiring FILE` it also tells braid serve the state of each
link whose port a switch reports down or up. It is a process of its own because os-ken owns
its event loop (and, with the eventlet hub, monkey-patches the standard
library); braid talks to it only over the HTTP API.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from braid.adapters.southbound.port_reporter import PortReporter

__all__ = ["main", "parse_args", "reporter_from"]

APP_MODULE = "braid.adapters.southbound.osken_app"


def _api_address(text: str) -> str:
    if not text.startswith("unix:"):
        _host_port(text)
    return text


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host or "127.0.0.1", int(port)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="braid controller")
    parser.add_argument(
        "--api", type=_api_address, default="127.0.0.1:7300", help="HOST:PORT or unix:PATH"
    )
    parser.add_argument(
        "--openflow",
        type=_host_port,
        default=("127.0.0.1", 6653),
        help="HOST:PORT where switches connect",
    )
    parser.add_argument("--state", type=Path, default=None, help="file keeping the desired state")
    parser.add_argument(
        "--api-token-file", type=Path, default=None, help="file holding the API's bearer token"
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        help="serve the API without a token (warned at every start; test benches only)",
    )
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument(
        "--service", default=None, help="braid serve's URL: post port-status link states there"
    )
    parser.add_argument(
        "--service-token-file", type=Path, default=None, help="file holding a monitor token"
    )
    parser.add_argument("--topology", type=Path, default=None, help="the service's topology file")
    parser.add_argument("--wiring", type=Path, default=None, help="the switches' wiring file")
    return parser.parse_args(argv)


REPORTER_OPTIONS = ("--service", "--service-token-file", "--topology", "--wiring")


def reporter_from(args: argparse.Namespace) -> PortReporter | None:
    """The port-status reporter the options ask for; a missing or bad one stops the process."""
    from braid.adapters.failover.service_action import LinkStateClient
    from braid.adapters.southbound.api_token import TokenFileError, read_token_file
    from braid.adapters.southbound.port_reporter import PortReporter, port_links
    from braid.adapters.topology_files import load_topology
    from braid.adapters.wiring_files import load_wiring
    from braid.core.errors import BraidError

    given = {o: getattr(args, o[2:].replace("-", "_")) for o in REPORTER_OPTIONS}
    if all(v is None for v in given.values()):
        return None
    missing = [o for o, v in given.items() if v is None]
    try:
        if missing:
            raise BraidError(f"{missing[0]}: reporting port status to braid serve needs it")
        token = read_token_file(args.service_token_file)
        wiring = load_wiring(args.wiring, load_topology(args.topology), hosts=False)
    except (BraidError, TokenFileError, OSError) as exc:
        print(f"braid controller: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    return PortReporter(port_links(wiring.ports), LinkStateClient.connect(args.service, token))


INSECURE_WARNING = (
    "braid controller: warning: --insecure: the API serves without authentication; "
    "any local user who can connect may change the switches' rules. "
    "Do not use --insecure outside a test bench."
)


def _token(path: Path | None, insecure: bool = False) -> str | None:
    """The API token, read before anything starts; an unusable file stops the process.

    Without a token file the API is refused unless `insecure` says so (with a warning).
    """
    from braid.adapters.southbound.api_token import TokenFileError, read_token_file

    if path is None:
        if not insecure:
            print(
                "braid controller: the API needs a token: pass --api-token-file FILE "
                "(one line, chmod 600; braid's driver sends it), or --insecure on a test bench",
                file=sys.stderr,
            )
            raise SystemExit(2)
        print(INSECURE_WARNING, file=sys.stderr, flush=True)
        return None
    try:
        return read_token_file(path)
    except TokenFileError as exc:
        print(f"braid controller: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


def _check_free(args: argparse.Namespace) -> None:
    """A taken --openflow or --api address stops the process with one line, before
    os-ken starts (which would otherwise carry on without its listener)."""
    from braid.adapters.listening import in_use, taken

    of_host, of_port = args.openflow
    for option, address in (("--openflow", f"{of_host}:{of_port}"), ("--api", args.api)):
        if not address.startswith("unix:") and taken(address):
            print(f"braid controller: {in_use(address, option)}", file=sys.stderr)
            raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    _check_free(args)
    token = _token(args.api_token_file, args.insecure)
    reporter = reporter_from(args)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    # Imported here: os-ken reads its configuration and picks its hub at import time.
    from os_ken import cfg
    from os_ken.base import app_manager
    from os_ken.controller import controller  # noqa: F401  (registers the OpenFlow options)
    from os_ken.lib import hub

    from braid.adapters.southbound.http_api import make_server

    of_host, of_port = args.openflow
    cfg.CONF(
        args=["--ofp-listen-host", of_host, "--ofp-tcp-listen-port", str(of_port)],
        project="os_ken",
    )
    manager = app_manager.AppManager.get_instance()
    manager.load_apps([APP_MODULE])
    from braid.adapters.southbound.osken_app import BraidControllerApp

    BraidControllerApp.state_file = args.state
    if reporter is not None:
        reporter.start()
        BraidControllerApp.port_listener = reporter.port_status
    services = manager.instantiate_apps(**manager.create_contexts())
    app = next(a for a in manager.applications.values() if a.__module__ == APP_MODULE)
    server = make_server(app, args.api, token)
    try:
        server.start()
    except OSError as exc:
        print(f"braid controller: {exc}; choose another --api address", file=sys.stderr)
        # os-ken's service threads are not daemons and nothing stops them yet;
        # nothing has been written, so leave at once.
        os._exit(2)
    guarded = "with a token" if token is not None else "without a token: --insecure"
    told = f"; port status to {args.service}" if reporter is not None else ""
    print(
        f"braid controller: OpenFlow on {of_host}:{of_port}, API on {args.api} ({guarded})" + told,
        flush=True,
    )
    try:
        hub.joinall(services)
    finally:
        server.stop()
        manager.close()
        if reporter is not None:
            reporter.close()


if __name__ == "__main__":  # pragma: no cover
    main()
