"""`braid reserve | list | show | modify | confirm | cancel | availability`: REST clients.

Thin: each command builds the body the API takes, sends it with
`BraidClient`, and prints the answer as a table (or as JSON with --json).
"""

from __future__ import annotations

import json
import os
import shlex
import ssl
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Final, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from braid.cli import client_views as views
from braid.cli import delivery_views
from braid.cli.client import DEFAULT_URL, ApiError, BraidClient, UnreachableError
from braid.cli.common import TzOpt, cli_instant, err_console, fail, relative_instant

T = TypeVar("T")
ACCEPTABLE: Final = (
    "earliest_start", "max_bandwidth", "split", "earliest_completion", "most_by_deadline",
)  # fmt: skip

PolicingOpt = Annotated[
    str | None,
    typer.Option(
        help="Traffic above the rate: soft (default: sent on as best effort) or hard "
        "(discarded at the ingress edge).",
        show_default=False,
    ),
]
UrlOpt = Annotated[
    str, typer.Option("--url", envvar="BRAID_URL", help="Where `braid serve` listens.")
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token", envvar="BRAID_TOKEN", help="API token (braid token create).", show_default=False
    ),
]
CaCertOpt = Annotated[
    Path | None,
    typer.Option(
        "--cacert",
        envvar="BRAID_CACERT",
        help="PEM file of the CA (or the self-signed certificate) to verify an https:// "
        "server with, instead of the system's CAs.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the server's JSON.")]
IdArg = Annotated[str, typer.Argument(help="Reservation id, e.g. r-1a2b3c4d5e6f.")]
Text = Annotated[str | None, typer.Option(show_default=False)]
Instant = Annotated[
    str | None,
    typer.Option(
        help="ISO 8601 with offset, epoch seconds, a local time (2026-12-04 17:00 "
        "America/Chicago; without a zone, in --tz), friday 17:00, or now, now+1h, now-30m.",
        callback=relative_instant,
        show_default=False,
    ),
]
Bandwidth = Annotated[
    str | None, typer.Option(help="Mbit/s, or with a unit: 500M, 10G.", show_default=False)
]
Duration = Annotated[
    str | None,
    typer.Option(
        help="Seconds, or with units: 90s, 15m, 1h30m, 3.5h, '2 days'.", show_default=False
    ),
]
MaxPaths = Annotated[int | None, typer.Option(help="Split over up to N paths.", show_default=False)]
Directional = Annotated[bool, typer.Option(help="Book one direction only.")]
Volume = Annotated[
    str | None,
    typer.Option(
        help="Bytes to move (volume mode): 40TB, 500GiB, or a number of bytes.",
        show_default=False,
    ),
]
Deadline = Annotated[
    str | None,
    typer.Option(
        help="Volume mode: all of it moved by then (ISO 8601, epoch seconds, now+1d).",
        callback=relative_instant,
        show_default=False,
    ),
]
MaxRate = Annotated[
    str | None,
    typer.Option(help="Volume mode: the total rate at most (10G).", show_default=False),
]
ObjectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--objective",
        help="Volume mode: earliest (done soonest, default) or flattest (lowest peak).",
        show_default=False,
    ),
]


def reserve(
    src: Text = None,
    dst: Text = None,
    bandwidth: Bandwidth = None,
    start: Instant = None,
    end: Instant = None,
    mode: Annotated[
        str | None, typer.Option(help="fixed, earliest, max-bandwidth or volume.")
    ] = None,
    duration: Duration = None,
    not_before: Instant = None,
    not_after: Instant = None,
    max_paths: MaxPaths = None,
    split: Annotated[str | None, typer.Option(help="flow or packet.")] = None,
    volume: Volume = None,
    deadline: Deadline = None,
    max_rate: MaxRate = None,
    objective: ObjectiveOpt = None,
    directional: Directional = False,
    hold: Annotated[bool, typer.Option(help="Hold it; confirm with `braid confirm`.")] = False,
    protect: Annotated[
        bool,
        typer.Option(help="Book a standby path too; traffic moves to it when a link goes down."),
    ] = False,
    policing: PolicingOpt = None,
    accept: Annotated[
        str | None,
        typer.Option(help="If rejected, take this alternative: " + ", ".join(ACCEPTABLE) + "."),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """Reserve bandwidth, or a volume by a deadline (--volume 40TB --deadline ...);
    if it does not fit, show the alternatives and how to take one."""
    if accept is not None and accept not in ACCEPTABLE:
        fail(f"--accept takes one of {', '.join(ACCEPTABLE)}, not {accept!r}")
    if volume is not None and mode is None:
        mode = "volume"
        # "From now" is what a transfer without --not-before means.
        not_before = not_before or cli_instant("now", "--not-before", tz, int(time.time()))
    body = given_fields(
        src=src, dst=dst, bandwidth=bandwidth, start=start, end=end, mode=mode,
        duration=duration, not_before=not_before, not_after=not_after, max_paths=max_paths,
        split=split, volume=volume, deadline=deadline, max_rate=max_rate, objective=objective,
        directional=directional or None, hold=hold or None, protect=protect or None,
        policing=policing,
    )  # fmt: skip

    def book(braid: BraidClient) -> dict[str, Any]:
        try:
            return braid.reserve(body)
        except ApiError as exc:
            chosen = [a for a in exc.alternatives if a.get("kind") == accept]
            if exc.status != 409 or not chosen:
                raise
            # The server's alternative is a ready-to-post body: send it as it is.
            return braid.reserve(chosen[0]["body"])

    def accept_command(kind: str) -> str:
        return _command("reserve", body, url, accept=kind)

    view = call_api(url, token, cacert, as_json, book, accept_command=accept_command, zone=tz)
    show_answer(view, as_json, views.reservation, tz)


def list_reservations(
    state: Annotated[str | None, typer.Option(help="e.g. reserved or held,reserved.")] = None,
    owner: Annotated[str | None, typer.Option(help="Operators: another user's.")] = None,
    start: Instant = None,
    end: Instant = None,
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="At most this many (default: all, fetched page by page)."),
    ] = None,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """List reservations by start time (yours; operators see everyone's)."""
    found = call_api(
        url,
        token,
        cacert,
        as_json,
        lambda b: b.find(limit=limit, state=state, owner=owner, start=start, end=end),
    )
    if as_json:
        typer.echo(json.dumps({"reservations": found}, indent=2))
    else:
        Console().print(views.reservations(found, tz))


def show(
    reservation_id: IdArg,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
    delivery: Annotated[
        bool,
        typer.Option(
            "--delivery",
            help="What its traffic got instead: offered, delivered and dropped Mbit/s "
            "per sampling interval against the booked rate, and a status.",
        ),
    ] = False,
) -> None:
    """Show one reservation: state, window, paths, shares, VLANs, recommended streams."""
    if delivery:
        found = call_api(url, token, cacert, as_json, lambda b: b.delivery(reservation_id))
        show_answer(found, as_json, delivery_views.delivery, tz)
        return
    show_answer(
        call_api(url, token, cacert, as_json, lambda b: b.get(reservation_id)),
        as_json,
        views.reservation,
        tz,
    )


def cancel(
    reservation_id: IdArg,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """Cancel a reservation; its bandwidth is free at once."""
    view = call_api(url, token, cacert, as_json, lambda b: b.cancel(reservation_id))
    show_answer(view, as_json, views.reservation, tz)


def confirm(
    reservation_id: IdArg,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """Confirm a hold (made with --hold) before it expires."""
    view = call_api(url, token, cacert, as_json, lambda b: b.confirm(reservation_id))
    show_answer(view, as_json, views.reservation, tz)


def modify(
    reservation_id: IdArg,
    end: Instant = None,
    bandwidth: Bandwidth = None,
    volume: Volume = None,
    deadline: Deadline = None,
    max_rate: MaxRate = None,
    objective: ObjectiveOpt = None,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """Change the end and/or bandwidth, or a volume's --deadline, --volume, --max-rate or
    --objective (what has moved stays moved); if the change does not fit, nothing changes."""
    body = given_fields(
        end=end, bandwidth=bandwidth,
        volume=volume, deadline=deadline, max_rate=max_rate, objective=objective,
    )  # fmt: skip
    if not body:
        fail("give --end and/or --bandwidth (a volume: --deadline, --volume, ...)")
    view = call_api(url, token, cacert, as_json, lambda b: b.modify(reservation_id, body))
    show_answer(view, as_json, views.reservation, tz)


def availability(
    mode: Annotated[
        str | None,
        typer.Option(help="fixed, earliest, max-bandwidth, all-slots, volume or quickest."),
    ] = None,
    src: Text = None,
    dst: Text = None,
    bandwidth: Bandwidth = None,
    start: Instant = None,
    end: Instant = None,
    duration: Duration = None,
    not_before: Instant = None,
    not_after: Instant = None,
    window_start: Instant = None,
    window_end: Instant = None,
    max_paths: MaxPaths = None,
    split: Annotated[str | None, typer.Option(help="flow or packet.")] = None,
    volume: Volume = None,
    deadline: Deadline = None,
    max_rate: MaxRate = None,
    objective: ObjectiveOpt = None,
    directional: Directional = False,
    url: UrlOpt = DEFAULT_URL,
    token: TokenOpt = None,
    cacert: CaCertOpt = None,
    as_json: JsonOpt = False,
    tz: TzOpt = None,
) -> None:
    """Ask without booking: does it fit, when is the earliest slot, how much fits, which
    slots; with --volume, when it would all have moved at the soonest (quickest)."""
    if volume is not None and mode is None:
        # By a deadline: does it fit; without one: when could it all have moved.
        mode = "volume" if deadline is not None else "quickest"
        not_before = not_before or cli_instant("now", "--not-before", tz, int(time.time()))
    query = given_fields(
        mode=mode, src=src, dst=dst, bandwidth=bandwidth, start=start, end=end,
        duration=duration, not_before=not_before, not_after=not_after,
        window_start=window_start, window_end=window_end, max_paths=max_paths, split=split,
        volume=volume, deadline=deadline, max_rate=max_rate, objective=objective,
        directional=directional or None,
    )  # fmt: skip
    show_answer(
        call_api(url, token, cacert, as_json, lambda b: b.availability(query), zone=tz),
        as_json,
        views.answer,
        tz,
    )


# -- shared steps ---------------------------------------------------------------------


def given_fields(**fields: Any) -> dict[str, Any]:
    """The options the user gave: the server applies its own defaults to the rest."""
    return {k: v for k, v in fields.items() if v is not None}


def show_answer(
    data: Mapping[str, Any],
    as_json: bool,
    render: Callable[..., Any],
    zone: str | None = None,
) -> None:
    """JSON as the server sent it (UTC, with each instant also in `zone` when the
    command had one), or `render`'s view with times in `zone`."""
    if as_json:
        typer.echo(json.dumps(data, indent=2))
    elif zone is None:
        Console().print(render(data))
    else:
        Console().print(render(data, zone))


def call_api(
    url: str,
    token: str | None,
    cacert: Path | None,
    as_json: bool,
    action: Callable[[BraidClient], T],
    *,
    accept_command: Callable[[str], str] | None = None,
    zone: str | None = None,
) -> T:
    """Run `action` against the server; any failure is reported and ends the command."""
    try:
        with BraidClient(url, token, verify=_verify(cacert), zone=zone) as braid:
            return action(braid)
    except UnreachableError as exc:
        if "CERTIFICATE_VERIFY_FAILED" in exc.why:
            fail(
                f"cannot reach braid at {url}: its certificate is not trusted ({exc.why})",
                "pass --cacert FILE (or set BRAID_CACERT) with the CA that signed it, "
                "or the server's own certificate if it is self-signed",
            )
        err_console.print(
            f"[bold red]error:[/] cannot reach braid at {escape(url)}: is `braid serve` running?"
        )
        err_console.print(f"[dim]{escape(exc.why)}[/]")
        raise typer.Exit(2) from exc
    except ApiError as exc:
        _report(exc, as_json, accept_command, zone)


def _verify(cacert: Path | None) -> ssl.SSLContext | bool:
    """How to verify an https:// server: with --cacert's CA, else the system's."""
    if cacert is None:
        return True
    try:
        return ssl.create_default_context(cafile=str(cacert))
    except (OSError, ssl.SSLError) as exc:
        fail(f"--cacert: cannot use {cacert} as a CA certificate: {exc}")


def _report(
    exc: ApiError,
    as_json: bool,
    accept_command: Callable[[str], str] | None,
    zone: str | None = None,
) -> NoReturn:
    if as_json:
        typer.echo(json.dumps({"status": exc.status, "error": exc.error}, indent=2))
    if exc.status == 401:
        fail(
            exc.message,
            "set BRAID_TOKEN (braid token create --user NAME --role user), or pass --token",
        )
    if exc.status == 409:
        _print_rejection(exc, accept_command, zone)
        raise typer.Exit(1)
    where = f"{exc.field}: " if exc.field else ""
    err_console.print(f"[bold red]error:[/] {escape(where + exc.message)}")
    raise typer.Exit(2 if exc.status == 422 else 1)


def _print_rejection(
    exc: ApiError, accept_command: Callable[[str], str] | None, zone: str | None = None
) -> None:
    err_console.print(f"[bold yellow]rejected:[/] {escape(exc.message)}")
    for conflict in exc.conflicts:
        err_console.print(f"  conflict: {escape(json.dumps(conflict))}")
    for alternative in exc.alternatives:
        kind = str(alternative.get("kind", "?"))
        err_console.print(
            f"[bold]alternative {escape(kind)}[/]: {escape(views.offer(alternative, zone))}"
        )
        if accept_command is not None:
            # One unwrapped line, so it can be copied and pasted whole.
            err_console.print(
                f"  accept it: {escape(accept_command(kind))}", highlight=False, soft_wrap=True
            )


def _command(name: str, body: Mapping[str, Any], url: str, **extra: str) -> str:
    """The shell command that sends `body` again (tokens are never echoed)."""
    words = ["braid", name]
    for key, value in {**body, **extra}.items():
        option = "--" + key.replace("_", "-")
        if value is True:
            words.append(option)
        elif value is not False:
            words += [option, str(value)]
    if url != os.environ.get("BRAID_URL", DEFAULT_URL):
        words += ["--url", url]
    return shlex.join(words)
