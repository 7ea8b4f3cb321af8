"""`braid interdomain reserve | show | list | cancel | modify`: REST clients of /v1/interdomain.

Thin, like the other client commands (and sharing their options, error
reporting and exit codes): build the body, send it with `BraidClient`,
print the answer as tables (or the server's JSON with --json).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Final
from urllib.parse import quote

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from braid.app.negotiation.defaults import STRATEGY
from braid.cli import client_cmd
from braid.cli.client import DEFAULT_URL, BraidClient, Json
from braid.cli.client_cmd import (
    Bandwidth,
    CaCertOpt,
    IdArg,
    Instant,
    JsonOpt,
    MaxPaths,
    TokenOpt,
    UrlOpt,
)
from braid.cli.client_views import bandwidth as show_bandwidth
from braid.cli.common import fail

if TYPE_CHECKING:
    from pathlib import Path

    from braid.app.interdomain import InterdomainService
    from braid.core.policy import Policy

ROUTE: Final = "/v1/interdomain/reservations"

app = typer.Typer(
    help="Multi-domain reservations negotiated by `braid serve` with the domain agents.",
    no_args_is_help=True,
)

Endpoint = Annotated[
    str | None,
    typer.Option(help="DOMAIN:POINT, a site domain and a border point or host in it."),
]
Strategy = Annotated[
    str | None,
    typer.Option(help="equal-split, partial-offers or full-offers.", show_default=False),
]
Volume = Annotated[
    str | None,
    typer.Option(
        help="Bytes to move by --deadline instead of a bandwidth: 40TB, 500GiB.",
        show_default=False,
    ),
]
MaxRate = Annotated[
    str | None,
    typer.Option(help="With --volume: the most the hosts send at once, 10G.", show_default=False),
]


@app.command("reserve")
def reserve(
    src: Endpoint = None,
    dst: Endpoint = None,
    bandwidth: Bandwidth = None,
    start: Instant = None,
    end: Instant = None,
    strategy: Strategy = None,
    max_paths: MaxPaths = None,
    volume: Volume = None,
    deadline: Instant = None,
    not_before: Instant = None,
    max_rate: MaxRate = None,
    policing: client_cmd.PolicingOpt = None,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Negotiate a reservation across domains; all of it is booked, or nothing.

    A bandwidth over --start/--end, or a --volume moved by --deadline (from
    --not-before, default now) as early as the domains' offers allow."""
    body = client_cmd.given_fields(
        src=_endpoint(src, "--src"), dst=_endpoint(dst, "--dst"), bandwidth=bandwidth,
        start=start, end=end, strategy=strategy, max_paths=max_paths, volume=volume,
        deadline=deadline, not_before=not_before, max_rate=max_rate, policing=policing,
    )  # fmt: skip
    view = client_cmd.call_api(
        url, token, cacert, as_json, lambda b: _send(b, "POST", ROUTE, json=body)
    )
    client_cmd.show_answer(view, as_json, plan)


@app.command("show")
def show(
    reservation_id: IdArg,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """One multi-domain reservation: paths, per-domain amounts, VLANs, rules, trace."""
    path = f"{ROUTE}/{quote(reservation_id, safe='')}"
    view = client_cmd.call_api(url, token, cacert, as_json, lambda b: _send(b, "GET", path))
    client_cmd.show_answer(view, as_json, plan)


@app.command("cancel")
def cancel(
    reservation_id: IdArg,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Release a multi-domain reservation in every domain; repeating it changes nothing."""
    path = f"{ROUTE}/{quote(reservation_id, safe='')}"
    view = client_cmd.call_api(url, token, cacert, as_json, lambda b: _send(b, "DELETE", path))
    client_cmd.show_answer(view, as_json, plan)


@app.command("modify")
def modify(
    reservation_id: IdArg,
    bandwidth: Bandwidth = None,
    start: Instant = None,
    end: Instant = None,
    strategy: Strategy = None,
    max_paths: MaxPaths = None,
    volume: Volume = None,
    deadline: Instant = None,
    max_rate: MaxRate = None,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a multi-domain reservation, make-before-break: the new version is committed
    in every domain and the old released, or nothing changes. A volume reservation takes
    --volume (the new total, counting what has moved), --deadline and --max-rate."""
    body = client_cmd.given_fields(
        bandwidth=bandwidth, start=start, end=end, strategy=strategy, max_paths=max_paths,
        volume=volume, deadline=deadline, max_rate=max_rate,
    )  # fmt: skip
    path = f"{ROUTE}/{quote(reservation_id, safe='')}"
    view = client_cmd.call_api(
        url, token, cacert, as_json, lambda b: _send(b, "PATCH", path, json=body)
    )
    client_cmd.show_answer(view, as_json, plan)


@app.command("list")
def list_reservations(
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 100,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Your multi-domain reservations, newest first (operators see everyone's)."""
    params = {"limit": str(limit)}
    found = client_cmd.call_api(
        url, token, cacert, as_json, lambda b: _send(b, "GET", ROUTE, params=params)
    )
    if as_json:
        typer.echo(json.dumps(found, indent=2))
    else:
        Console().print(table(found["reservations"]))


def started_interdomain(
    domains: Path | None,
    negotiation_db: Path,
    strategy: str = STRATEGY,
    policy: Policy | None = None,
    peer_token_file: Path | None = None,
) -> InterdomainService | None:
    """For `braid serve --domains FILE --negotiation-db FILE`: the negotiation, or None when
    no --domains; a bad file or strategy ends the command with an error naming the option.

    `strategy` is the default of requests that name none; `peer_token_file` holds the
    token agents with a peer policy know this negotiation by."""
    if domains is None:
        if peer_token_file is not None:
            fail("--peer-token-file: only with --domains (it is sent to the domain agents)")
        return None
    from braid.adapters.rpc.channels import read_token
    from braid.app.negotiation.config import OrchestratorConfig
    from braid.app.negotiation.results import check_strategy
    from braid.bootstrap.orchestrator import open_interdomain
    from braid.core.errors import BraidError

    try:
        chosen = check_strategy(strategy) or STRATEGY
    except BraidError as exc:
        fail(f"--interdomain-strategy: {exc}")
    try:
        token = read_token(peer_token_file) if peer_token_file is not None else None
    except ValueError as exc:
        fail(str(exc))
    try:
        config = OrchestratorConfig(chosen)
        return open_interdomain(domains, negotiation_db, config=config, policy=policy, token=token)
    except BraidError as exc:
        fail(f"--domains: {exc}")


def _send(braid: BraidClient, method: str, path: str, **kwargs: Any) -> Json:
    # The client's one transport step: the same errors as every other command.
    return braid._object(method, path, **kwargs)


def _endpoint(value: str | None, option: str) -> dict[str, str] | None:
    if value is None:
        return None
    domain, sep, point = value.partition(":")
    if not sep or not domain or not point:
        fail(f"{option} takes DOMAIN:POINT, e.g. site-a:a-dtn, not {value!r}")
    return {"domain": domain, "point": point}


def _where(end: object) -> str:
    if isinstance(end, Mapping):
        return f"{end.get('domain')}:{end.get('point')}"
    return str(end)


def table(found: Sequence[Mapping[str, Any]]) -> Table | Text:
    if not found:
        return Text("no multi-domain reservations")
    out = Table(title=f"{len(found)} multi-domain reservation(s)")
    for column in ("id", "status", "owner", "from → to", "bandwidth", "start", "end", "paths"):
        out.add_column(column, no_wrap=column in ("id", "status"))
    for r in found:
        out.add_row(
            str(r.get("id")),
            str(r.get("status")),
            str(r.get("owner")),
            f"{_where(r.get('src'))} → {_where(r.get('dst'))}",
            show_bandwidth(r.get("bandwidth")),
            str(r.get("start")),
            str(r.get("end")),
            str(len(r.get("paths") or [])),
        )
    return out


def plan(view: Mapping[str, Any]) -> Group:
    """The facts, a row per path (domains, share, VLANs), the amount per domain, the rules."""
    facts = Table(show_header=False, title=f"multi-domain reservation {view.get('id')}")
    facts.add_column("field", style="bold")
    facts.add_column("value")
    for name, value in (
        ("status", view.get("status")),
        ("owner", view.get("owner")),
        ("from → to", f"{_where(view.get('src'))} → {_where(view.get('dst'))}"),
        *_window_facts(view),
        ("strategy", view.get("strategy")),
        ("policing", view.get("policing")),
        ("reason", view.get("reason") or None),
    ):
        if value is not None:
            facts.add_row(name, str(value))
    paths = Table(title="paths")
    for column in ("#", "domains", "bandwidth", "VLANs"):
        paths.add_column(column)
    for i, p in enumerate(view.get("paths") or []):
        vlans = ", ".join(f"{v['link']}={v['vlan']}" for v in p.get("vlans", []))
        paths.add_row(str(i), " > ".join(p["domains"]), show_bandwidth(p.get("bandwidth")), vlans)
    amounts = ", ".join(f"{d} {show_bandwidth(a)}" for d, a in (view.get("domains") or {}).items())
    rules = sum(len(sw.get("rules", [])) for sw in view.get("switches") or [])
    switches = len(view.get("switches") or [])
    held = ", ".join(f"{d} {state}" for d, state in (view.get("holdings") or {}).items())
    tail = Text(
        f"per domain: {amounts or '-'}\nrule plan: {rules} rules on {switches} switches"
        + (f"\nheld: {held}" if held else "")
    )
    parts = [facts, paths]
    if view.get("profile"):
        parts.append(_profile_table(view["profile"]))
    return Group(*parts, tail, *(Text(line) for line in view.get("trace") or []))


def _window_facts(view: Mapping[str, Any]) -> list[tuple[str, object]]:
    """A window booking's window and bandwidth, or a volume's bytes, deadline and completion."""
    if "volume_bytes" not in view:
        return [
            ("window", f"{view.get('start')} → {view.get('end')}"),
            ("bandwidth", show_bandwidth(view.get("bandwidth"))),
        ]
    return [
        ("volume", f"{view.get('volume_bytes')} bytes"),
        ("between", f"{view.get('not_before')} → {view.get('deadline')}"),
        ("completion", view.get("completion")),
        ("most by the deadline", view.get("most_by_deadline")),
        ("earliest completion", view.get("earliest_completion")),
    ]


def _profile_table(profile: Sequence[Mapping[str, Any]]) -> Table:
    out = Table(title="profile")
    for column in ("start", "end", "rate", "per path"):
        out.add_column(column)
    for step in profile:
        rates = ", ".join(show_bandwidth(r) for r in step.get("path_rates", []))
        out.add_row(str(step["start"]), str(step["end"]), show_bandwidth(step["rate"]), rates)
    return out
