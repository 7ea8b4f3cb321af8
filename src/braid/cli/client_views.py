"""Rich tables for what the REST API returns (reservations, answers, alternatives).

The wire's instants are UTC; with a zone (`--tz`) each view shows them in it,
and says in its caption which zone its times are in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from braid.cli.common import shown_zone
from braid.core.errors import InputError
from braid.core.model.instants import parse_instant, readable_instant_in
from braid.core.model.units import BPS_PER_MBPS, format_bandwidth, format_volume, human_duration


def when(instant: object, zone: str | None = None) -> str:
    """An instant from the wire (ISO 8601, UTC) as a person reads it in `zone`."""
    if zone is None or not isinstance(instant, str):
        return str(instant)
    try:
        return readable_instant_in(parse_instant(instant, "instant"), zone)
    except InputError:  # not an instant after all: shown as sent
        return instant


def bandwidth(mbps: object) -> str:
    """Mbit/s from the wire, in the unit a person reads best."""
    if isinstance(mbps, int | float) and not isinstance(mbps, bool):
        return format_bandwidth(round(mbps * BPS_PER_MBPS))
    return str(mbps)


def reservations(found: Sequence[Mapping[str, Any]], zone: str | None = None) -> Table | Text:
    if not found:
        return Text("no reservations")
    table = Table(title=f"{len(found)} reservation(s)", caption=shown_zone(zone))
    for column in ("id", "state", "owner", "from → to", "bandwidth", "start", "end", "paths"):
        # Ids and states are what people copy and filter by: never break them.
        whole = column in ("id", "state", "bandwidth")
        # The rest folds onto more lines on a narrow terminal rather than losing its end.
        table.add_column(
            column,
            no_wrap=whole,
            overflow="fold",
            justify="right" if column == "bandwidth" else "left",
        )
    for r in found:
        table.add_row(
            str(r.get("id")),
            str(r.get("state")),
            str(r.get("owner")),
            f"{r.get('src')} → {r.get('dst')}",
            bandwidth(r.get("bandwidth")),
            when(r.get("start"), zone),
            when(r.get("end"), zone),
            str(len(r.get("paths") or [])),
        )
    return table


def reservation(view: Mapping[str, Any], zone: str | None = None) -> Group:
    """One reservation: its facts, then a row per path with its share and VLAN."""
    title = f"reservation {view.get('id')}"
    facts = Table(show_header=False, title=title, caption=shown_zone(zone))
    facts.add_column("field", style="bold")
    facts.add_column("value")
    rows = {
        "state": view.get("state"),
        "owner": view.get("owner"),
        "from → to": f"{view.get('src')} → {view.get('dst')}",
        "window": f"{when(view.get('start'), zone)} → {when(view.get('end'), zone)}",
        "bandwidth": bandwidth(view.get("bandwidth")),
        "split": view.get("split"),
        "policing": view.get("policing"),
        "recommended streams": view.get("recommended_streams"),
        "hold expires": _maybe_when(view.get("hold_expires_at"), zone),
        "provisioning": provisioning(view.get("provisioning"), zone),
        "version": view.get("version"),
    }
    for name, value in rows.items():
        if value is not None:
            facts.add_row(name, str(value))
    shown = view.get("volume")
    if isinstance(shown, Mapping):
        facts.add_row("volume", volume(shown.get("bytes")))
        facts.add_row("completion", str(shown.get("completion")))
        facts.add_row("peak", bandwidth(shown.get("peak")))
        return Group(facts, profile(shown.get("profile") or []))
    vlans = {v.get("path"): v.get("vlan") for v in view.get("vlans") or []}
    return Group(facts, _paths(view.get("paths") or [], view.get("weights") or [], vlans))


def _maybe_when(instant: object, zone: str | None) -> str | None:
    return None if instant is None else when(instant, zone)


def volume(count: object) -> str:
    """Bytes from the wire, in the unit a person reads best."""
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        return format_volume(count)
    return str(count)


def profile(steps: Sequence[Mapping[str, Any]], zone: str | None = None) -> Table | Text:
    """A volume's steps: when, at what rate, over which paths."""
    if not steps:
        return Text("")
    table = Table(title="profile")
    for column in ("start", "end", "rate", "paths"):
        table.add_column(column, overflow="fold", justify="right" if column == "rate" else "left")
    for step in steps:
        paths = "\n".join(
            f"{' → '.join(p.get('nodes') or [])} ({bandwidth(p.get('bandwidth'))})"
            for p in step.get("paths") or []
        )
        table.add_row(
            when(step.get("start"), zone),
            when(step.get("end"), zone),
            bandwidth(step.get("rate")),
            paths,
        )
    return table


def provisioning(state: object, zone: str | None = None) -> str | None:
    """What the switches hold of it: `installed, verified`, `failed on s2: connection
    refused`, or `installed; path 0 (VLAN 7) h1→h2: lost at s2 (…)`."""
    if not isinstance(state, Mapping):
        return None
    text = str(state.get("state"))
    if state.get("error"):
        where = f" on {state['switch']}" if state.get("switch") else ""
        text += f"{where}: {state['error']}"
    if state.get("verified") is True:
        text += ", verified"
    elif state.get("check"):
        text += f"; {state['check']}"  # the hop that lost the probes, or why none were sent
    return f"{text} (since {when(state.get('since'), zone)})"


def answer(decision: Mapping[str, Any], zone: str | None = None) -> Group:
    """An availability answer: status, window, bandwidth or slots, and why not."""
    facts = Table(show_header=False, title="availability", caption=shown_zone(zone))
    facts.add_column("field", style="bold")
    facts.add_column("value")
    facts.add_row("status", str(decision.get("status")))
    for name in ("start", "end"):
        if decision.get(name) is not None:
            facts.add_row(name, when(decision[name], zone))
    duration = decision.get("duration")
    if isinstance(duration, int) and not isinstance(duration, bool):
        facts.add_row("duration", human_duration(duration))
    if decision.get("reason") is not None:
        facts.add_row("reason", str(decision["reason"]))
    if decision.get("bandwidth") is not None:
        facts.add_row("bandwidth", bandwidth(decision["bandwidth"]))
    _volume_facts(facts, decision, zone)
    if decision.get("profile"):
        return Group(facts, profile(decision["profile"], zone))
    _slots(facts, decision.get("slots") or [], decision.get("free") or [], zone)
    for kind, value in (decision.get("alternatives") or {}).items():
        shown = bandwidth(value) if kind in ("max_bandwidth", "max_flow") else when(value, zone)
        facts.add_row(f"alternative {kind}", shown)
    return Group(facts, _paths(decision.get("paths") or [], decision.get("weights") or [], {}))


def _volume_facts(facts: Table, decision: Mapping[str, Any], zone: str | None = None) -> None:
    """A volume answer's bytes, completion and peak, or a refusal's most by the deadline."""
    if decision.get("volume") is not None:
        facts.add_row("volume", volume(decision["volume"]))
    if decision.get("completion") is not None:
        facts.add_row("completion", when(decision["completion"], zone))
    if decision.get("peak") is not None:
        facts.add_row("peak", bandwidth(decision["peak"]))
    if decision.get("most_by_deadline") is not None:
        facts.add_row("most by the deadline", volume(decision["most_by_deadline"]))
        # A refused volume without an earliest completion never completes.
        earliest = decision.get("earliest_completion", "never")
        facts.add_row("earliest completion", when(earliest, zone))


def _slots(
    facts: Table, slots: list[list[str]], free: list[list[str]], zone: str | None = None
) -> None:
    """Each all-slots span: its free time (to the end of a booking at its last start),
    then the starts it allows; `slots` alone are starts, never the end of free time."""
    for n, (first, stop) in enumerate(slots):
        starts = f"from {when(first, zone)}, before {when(stop, zone)}"
        if n < len(free):
            facts.add_row("free slot", " → ".join(when(t, zone) for t in free[n]))
            facts.add_row("  can start", starts)
        else:  # a server that does not say the free time
            facts.add_row("can start", starts)


def offer(alternative: Mapping[str, Any], zone: str | None = None) -> str:
    """What an alternative changes, in a few words."""
    body = alternative.get("body") or {}
    kind = alternative.get("kind")
    if kind == "earliest_start":
        return f"start {when(body.get('start'), zone)}, end {when(body.get('end'), zone)}"
    if kind == "max_bandwidth":
        return f"{bandwidth(body.get('bandwidth'))} instead"
    if kind == "split":
        return f"split over up to {body.get('max_paths')} paths"
    if kind == "earliest_completion":
        return f"all of it by {body.get('deadline')}"
    if kind == "most_by_deadline":
        return f"{volume(body.get('volume'))} by the deadline instead"
    return ", ".join(f"{k}={v}" for k, v in body.items())


def _paths(
    paths: Sequence[Mapping[str, Any]], weights: Sequence[float], vlans: Mapping[Any, Any]
) -> Table | Text:
    if not paths:
        return Text("")
    table = Table(title="paths")
    for column in ("#", "nodes", "links", "bandwidth", "share", "vlan"):
        table.add_column(column)
    for i, path in enumerate(paths):
        share = f"{weights[i]:.0%}" if i < len(weights) else ""
        vlan = vlans.get(i)
        table.add_row(
            str(i),
            " → ".join(path.get("nodes") or []),
            ", ".join(path.get("links") or []),
            bandwidth(path.get("bandwidth")),
            share,
            "—" if vlan is None else str(vlan),
        )
    return table


def audit(entries: Sequence[Mapping[str, Any]], zone: str | None = None) -> Table | Text:
    """Every change to a reservation: when, who, what, from which state to which."""
    if not entries:
        return Text("no audit entries")
    title = f"{len(entries)} audit entr{'y' if len(entries) == 1 else 'ies'}"
    table = Table(title=title, caption=shown_zone(zone))
    for column in ("at", "actor", "action", "from → to", "detail"):
        table.add_column(column, overflow="fold")
    for e in entries:
        change = f"{e.get('from') or ''} → {e.get('to') or ''}" if e.get("to") else ""
        detail = ", ".join(f"{k}={v}" for k, v in (e.get("detail") or {}).items())
        at = when(e.get("at"), zone)
        table.add_row(at, str(e.get("actor")), str(e.get("action")), change, detail)
    return table


def maintenance(done: Mapping[str, Any], zone: str | None = None) -> Group:
    """A maintenance window booked, and what it moved or failed."""
    window = done.get("maintenance") or {}
    span = f"{when(window.get('start'), zone)} → {when(window.get('end'), zone)}"
    lines = [
        Text(f"maintenance {window.get('id')}: {span} ({shown_zone(zone)})"),
        *(
            Text(f"rerouted {r.get('id')}: " + " | ".join("-".join(p["nodes"]) for p in r["paths"]))
            for r in done.get("rerouted") or []
        ),
        *(Text(f"failed {f.get('id')}: {f.get('why')}") for f in done.get("failed") or []),
    ]
    return Group(*lines)


def link_state(done: Mapping[str, Any]) -> Group:
    """A link's new state, and what it did to the reservations on it."""
    head = f"link {done.get('link')} is {done.get('state')}"
    if not done.get("changed"):
        head += " (it was already; nothing changed)"
    moves = [Text(f"{m.get('action')} {m.get('id')}: {m.get('why')}") for m in done["moved"]]
    return Group(Text(head), *moves)


def topology(data: Mapping[str, Any]) -> Table:
    """The service's current topology version, in a few numbers."""
    facts = Table(show_header=False, title=f"topology version {data.get('version')}")
    facts.add_column("what", style="bold")
    facts.add_column("value", justify="right")
    facts.add_row("nodes", str(len(data.get("nodes") or [])))
    facts.add_row("links", str(len(data.get("links") or [])))
    facts.add_row("domains", str(len(data.get("domains") or [])))
    return facts
