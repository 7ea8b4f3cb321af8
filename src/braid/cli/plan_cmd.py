"""`braid plan` (batch planner) and `braid demo` (the planner on the bundled example)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from braid.adapters.plan_contract import encode
from braid.app.planning import plan_lines
from braid.cli.common import TzOpt, err_console, fail, open_topology, shown_zone
from braid.cli.topology_cmd import DefaultCapacityOpt, TopologyOpt
from braid.core.planning.decisions import Decision, Invalid, Refused, TenantReserved

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

# Rich's progress bar and table load only when shown: `braid plan` piped to
# a file starts faster (start-up counts in its decisions per second).


def plan(
    topology: TopologyOpt,
    requests: Annotated[
        str, typer.Argument(help="JSON-lines file of requests, or - for standard input.")
    ] = "-",
    default_capacity: DefaultCapacityOpt = None,
    table: Annotated[
        bool, typer.Option("--table", help="Show a table instead of JSON lines.")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Exit with status 1 if any line is not a valid request."),
    ] = False,
    tz: TzOpt = None,
) -> None:
    """Plan requests online: one JSON decision per request line, in order.

    Lines that are not valid requests get an `error` decision naming the field;
    their count goes to standard error, and the exit status is 1 when every
    line was invalid (or any, with --strict). With --tz, local times without
    an offset (`2026-12-04 17:00`, `friday 17:00`) are read in that zone, and
    the table shows times in it; JSON lines keep epoch seconds.
    """
    import time

    model = open_topology(topology, default_capacity)
    tally = _Tally()
    with ExitStack() as stack:
        source = _open_requests(requests, stack)
        lines = _with_progress(source, requests, stack)
        # The clock is read once, here: day words of every line mean the same day.
        planned = plan_lines(model, lines, zone=tz, now=int(time.time()))
        decisions = tally.count(planned)
        if table:
            _print_table(decisions, title=f"braid plan — {topology.name}", zone=tz)
        else:
            for decision in decisions:
                sys.stdout.write(json.dumps(encode(decision)) + "\n")
    if tally.invalid:
        err_console.print(
            f"[yellow]{tally.invalid} of {tally.lines} line(s) were not valid requests[/] "
            "(their decisions have status error and name the field)"
        )
    if tally.invalid and (strict or tally.invalid == tally.lines):
        raise typer.Exit(1)


class _Tally:
    """Counts the decisions that go by, and the invalid ones among them."""

    def __init__(self) -> None:
        self.lines = 0
        self.invalid = 0

    def count(self, decisions: Iterable[Decision]) -> Iterator[Decision]:
        for decision in decisions:
            self.lines += 1
            self.invalid += isinstance(decision, Invalid)
            yield decision


def demo(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print JSON lines instead of a table.")
    ] = False,
) -> None:
    """Plan the bundled example requests on the bundled example network."""
    from braid.adapters.topology_files import load_topology

    examples = resources.files("braid.examples")
    with resources.as_file(examples / "science-net.yaml") as topo_path:
        model = load_topology(topo_path)
    lines = (examples / "requests.jsonl").read_text().splitlines()
    decisions = plan_lines(model, lines)
    if as_json:
        for decision in decisions:
            typer.echo(json.dumps(encode(decision)))
        return
    from rich.console import Console

    console = Console()
    console.print(
        f"[bold]braid demo[/]: {len(model.nodes)} nodes, {len(model.links)} links; "
        f"{sum(1 for x in lines if x.strip())} requests planned online, each seeing the last"
    )
    _print_table(decisions, title="decisions", console=console)


def _open_requests(name: str, stack: ExitStack) -> TextIO:
    if name == "-":
        return sys.stdin
    path = Path(name)
    if not path.is_file():
        fail(
            f"requests file {name} not found", "give a JSON-lines file, or - to read standard input"
        )
    return stack.enter_context(path.open(encoding="utf-8"))


def _with_progress(source: TextIO, name: str, stack: ExitStack) -> Iterable[str]:
    """A progress bar on the terminal for file inputs large enough to wait for."""
    if name == "-" or not err_console.is_terminal:
        return source
    with Path(name).open(encoding="utf-8") as counting:
        total = sum(1 for _ in counting)
    if total < 1000:
        return source
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    progress = stack.enter_context(
        Progress(
            TextColumn("planning"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        )
    )
    task = progress.add_task("plan", total=total)
    return _advance(source, progress, task)


def _advance(lines: Iterable[str], progress: Progress, task: Any) -> Iterator[str]:
    for line in lines:
        yield line
        progress.advance(task)


_STATUS_STYLE = {
    "reserved": "green",
    "answered": "cyan",
    "released": "blue",
    "rejected": "yellow",
    "error": "red",
}


def _print_table(
    decisions: Iterable[Decision],
    *,
    title: str,
    console: Console | None = None,
    zone: str | None = None,
) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False, caption=shown_zone(zone))
    for column in ("id", "status", "start", "end", "Mbit/s", "paths / answer"):
        table.add_column(column, overflow="fold")
    for typed in decisions:
        decision = encode(typed)
        style = _STATUS_STYLE.get(decision["status"], "")
        table.add_row(
            decision["id"],
            f"[{style}]{decision['status']}[/]",
            _when(decision.get("start"), zone),
            _end(decision, zone),
            _mbps(decision),
            _answer(decision, _reason(typed, decision, zone), zone),
        )
    (console or Console()).print(table)


def _mbps(decision: dict[str, Any]) -> str:
    """The bandwidth column: what was booked or found, or a volume profile's peak."""
    for key in ("bandwidth", "max_bandwidth", "peak"):
        if key in decision:
            return str(decision[key])
    return ""


def _end(decision: dict[str, Any], zone: str | None = None) -> str:
    if "start" in decision and decision.get("end") is None and decision["status"] == "reserved":
        return "open"
    return _when(decision.get("end"), zone)


def _when(epoch: object, zone: str | None = None) -> str:
    """An instant as a person reads it, in `zone` (UTC without); the JSON lines keep
    epoch seconds."""
    from braid.core.model.instants import readable_instant_in

    if isinstance(epoch, int) and not isinstance(epoch, bool):
        return readable_instant_in(epoch, zone)
    return str(epoch or "")


def _slot_spans(slots: list[list[int]], duration: int, zone: str | None = None) -> str:
    """All-slots spans as free time, then the starts they allow: the contract's `slots`
    are start times [a, b), free from a until a booking at the last start (b - 1) ends."""
    if not slots:
        return "slots: none"

    def at(epoch: int) -> str:
        return _when(epoch, zone)

    return "free " + ", ".join(
        f"[{at(a)}, {at(b - 1 + duration)}) (starts [{at(a)}, {at(b)}))" for a, b in slots
    )


def _reason(decision: Decision, line: dict[str, Any], zone: str | None = None) -> str | None:
    """The line's reason for a person: a refusal's or a shortfall's instants written
    for people, in `zone` (UTC's ISO 8601 without)."""
    from braid.core.model.instants import readable_instant_in

    def write(epoch: int) -> str:
        return readable_instant_in(epoch, zone)

    if isinstance(decision, Refused):
        return decision.text(write)
    if isinstance(decision, TenantReserved) and decision.why is not None:
        return decision.why.text(write)
    return None if line.get("reason") is None else str(line["reason"])


def _answer(decision: dict[str, Any], reason: str | None, zone: str | None = None) -> str:
    parts = []
    for path in decision.get("paths", []):
        parts.append(f"{'-'.join(path['nodes'])} ({path['bandwidth']})")
    for step in decision.get("profile", []):
        paths = ", ".join(f"{'-'.join(p['nodes'])} ({p['bandwidth']})" for p in step["paths"])
        span = f"[{_when(step['start'])}, {_when(step['end'])})"
        parts.append(f"{span} {step['rate']} Mbit/s: {paths}")
    if "slots" in decision:
        parts.append(_slot_spans(decision["slots"], decision.get("duration", 0), zone))
    if decision.get("resequence"):
        parts.append(f"resequence (MDI {decision['mdi']})")
    for moved in decision.get("reallocated", []):
        parts.append(f"moved {moved['id']}")
    if reason is not None:
        parts.append(reason)
    return "\n".join(parts)
