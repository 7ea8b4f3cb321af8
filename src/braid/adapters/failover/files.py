"""Reading throughput traces and degradation events for `braid analyze impulse-response`.

A trace is a CSV file with a header naming `time` and `bps` (or `mbps`), JSON
lines `{"t": …, "bps": …}`, or iperf3's `--json` output (each interval's end,
from the test's start time, and its bits per second). Events are one time a
line (`#` starts a comment), or a monitor's JSON-lines log in which
`degrade` records open an event and the `detect` and `action` records after
it fill in when it was seen and when the switch's rules were in.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from braid.core.errors import InputError
from braid.core.impulse import EventMarks, Trace

__all__ = ["read_events", "read_trace"]


def read_trace(path: Path) -> Trace:
    text = _text(path)
    stripped = text.lstrip()
    if stripped.startswith("{") and '"intervals"' in text and '"start"' in text:
        return _iperf3(path, json.loads(text))
    if stripped.startswith("{"):
        return _json_lines_trace(path, text)
    return _csv_trace(path, text)


def read_events(path: Path) -> list[EventMarks]:
    text = _text(path)
    if text.lstrip().startswith("{"):
        return _log_events(path, text)
    events: list[EventMarks] = []
    for number, line in enumerate(text.splitlines(), start=1):
        body = line.split("#", 1)[0].strip()
        if body:
            events.append(EventMarks(_number(body, f"{path}:{number}")))
    if not events:
        raise InputError(str(path), "no degradation events in the file")
    return events


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from exc


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool):
        raise InputError(field, f"{value!r} is not a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(field, f"{value!r} is not a number") from None


def _csv_trace(path: Path, text: str) -> Trace:
    rows = list(csv.DictReader(text.splitlines()))
    header = {name.strip().lower(): name for name in (rows[0].keys() if rows else [])}
    if "time" not in header or not ({"bps", "mbps"} & header.keys()):
        raise InputError(
            str(path), "a CSV trace needs a header with a `time` column and `bps` or `mbps`"
        )
    scale, column = (1.0, header["bps"]) if "bps" in header else (1e6, header["mbps"])
    times = [_number(r[header["time"]], f"{path}:{k + 2}.time") for k, r in enumerate(rows)]
    rates = [_number(r[column], f"{path}:{k + 2}.{column}") * scale for k, r in enumerate(rows)]
    return Trace.of(times, rates, field=str(path))


def _json_lines_trace(path: Path, text: str) -> Trace:
    times: list[float] = []
    rates: list[float] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = _record(path, number, line)
        times.append(_number(record.get("t"), f"{path}:{number}.t"))
        rates.append(_number(record.get("bps"), f"{path}:{number}.bps"))
    return Trace.of(times, rates, field=str(path))


def _iperf3(path: Path, doc: dict[str, Any]) -> Trace:
    try:
        began = float(doc["start"]["timestamp"]["timesecs"])
        intervals = doc["intervals"]
        times = [began + float(i["sum"]["end"]) for i in intervals]
        rates = [float(i["sum"]["bits_per_second"]) for i in intervals]
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(str(path), f"not an iperf3 --json result: missing {exc}") from None
    return Trace.of(times, rates, field=str(path))


def _record(path: Path, number: int, line: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{number}", f"not JSON: {exc.msg}") from None
    if not isinstance(record, dict):
        raise InputError(f"{path}:{number}", "each line must be a JSON object")
    return record


def _log_events(path: Path, text: str) -> list[EventMarks]:
    events: list[EventMarks] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = _record(path, number, line)
        kind = record.get("kind")
        if kind not in ("degrade", "detect", "action"):
            continue
        t = _number(record.get("t"), f"{path}:{number}.t")
        if kind == "degrade":
            events.append(EventMarks(t))
        elif events and kind == "detect" and events[-1].detected is None:
            events[-1] = EventMarks(events[-1].degraded, t, events[-1].switched)
        elif events and kind == "action" and events[-1].switched is None and record.get("ok"):
            done = _number(record.get("done", t), f"{path}:{number}.done")
            events[-1] = EventMarks(events[-1].degraded, events[-1].detected, done)
    if not events:
        raise InputError(str(path), "no `degrade` records: the log names no degradation events")
    return events
