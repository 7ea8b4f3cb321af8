"""Figures and the table of the service benchmark."""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from service_clients import Answers
from service_store import TOPOLOGY, World

FLOOR_SQLITE_P50_MS = 10.0
FLOOR_ADMISSIONS_PER_S = 200.0


def percentile_ms(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if q == 0.5:
        return statistics.median(values) * 1e3
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] * 1e3


def figures(answers: Answers) -> dict[str, Any]:
    """Counts by outcome, latency percentiles, and rates over the run's wall time."""
    every = [s for _, s in answers.results]
    admitted = [s for status, s in answers.results if status == 201]
    rejected = [s for status, s in answers.results if status == 409]
    wall = answers.wall_s or 1e-9
    return {
        "posts": len(every),
        "admitted": len(admitted),
        "rejected": len(rejected),
        "other": len(every) - len(admitted) - len(rejected),
        "other_statuses": sorted({st for st, _ in answers.results if st not in (201, 409)}),
        "p50_ms": percentile_ms(every, 0.5),
        "p99_ms": percentile_ms(every, 0.99),
        "admitted_p50_ms": percentile_ms(admitted, 0.5),
        "rejected_p50_ms": percentile_ms(rejected, 0.5),
        "wall_s": round(answers.wall_s, 2),
        "decisions_per_s": len(every) / wall,
        "admissions_per_s": len(admitted) / wall,
        "cpu_ms_per_post": {k: round(v, 2) for k, v in answers.cpu_ms_per_post.items()},
    }


TableRow = tuple[str, str, str, bool | None]


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} ms"


def latency_rows(name: str, f: dict[str, Any]) -> list[TableRow]:
    return [
        (f"  {name}: p50 / p99", f"{ms(f['p50_ms'])} / {ms(f['p99_ms'])}", "", None),
        (f"  {name}: admitted / rejected / other", _outcomes(f), "", None),
        (
            f"  {name}: p50 admitted / rejected",
            f"{ms(f['admitted_p50_ms'])} / {ms(f['rejected_p50_ms'])}",
            "",
            None,
        ),
        *_cpu_row(name, f["cpu_ms_per_post"]),
    ]


def _cpu_row(name: str, cpu: dict[str, float]) -> list[TableRow]:
    """CPU ms per POST by process: where the machine's time went (others: not braid's)."""
    if not cpu:
        return []
    parts = " / ".join(f"{cpu[k]:.1f}" for k in ("servers", "postgres", "clients", "others"))
    return [(f"  {name}: CPU ms per POST: server / PG / client / others", parts, "", None)]


def _outcomes(f: dict[str, Any]) -> str:
    other = f"{f['other']} {f['other_statuses']}" if f["other"] else "0"
    return f"{f['admitted']} / {f['rejected']} / {other}"


def sqlite_rows(result: dict[str, Any], world: World) -> list[TableRow]:
    loaded, http, inproc = result["preload"], result["http"], result["in_process"]
    where = f"{TOPOLOGY}: {len(world.topology.nodes)} nodes, {len(world.topology.links)} links"
    p50, base = http["p50_ms"], inproc["p50_ms"]
    overhead = f"+{p50 - base:.2f} ms (×{p50 / base:.2f})" if p50 and base else "—"
    return [
        (
            f"bookings in place ({where})",
            f"{loaded['placed']:,} of {loaded['tried']:,} tried, {loaded['seconds']} s",
            "≥ 10,000",
            loaded["placed"] >= 10_000,
        ),
        (
            "SQLite: POST p50, 1 client, 1 server",
            ms(p50),
            f"≤ {FLOOR_SQLITE_P50_MS:g} ms",
            p50 is not None and p50 <= FLOOR_SQLITE_P50_MS,
        ),
        *latency_rows("HTTP", http),
        ("SQLite: ReservationService.reserve p50 (no HTTP)", ms(base), "", None),
        *latency_rows("in process", inproc),
        ("HTTP overhead on the p50", overhead, "", None),
        _check_row("SQLite: overbooking in the store afterwards", http["check"]),
    ]


def postgres_rows(result: dict[str, Any]) -> list[TableRow]:
    if "skipped" in result:
        return [("PostgreSQL", result["skipped"], "", None)]
    two, one = result["replicas_2"], result["replicas_1"]
    ratio = two["admissions_per_s"] / one["admissions_per_s"] if one["admissions_per_s"] else 0
    rows: list[TableRow] = [
        (
            "PostgreSQL: admissions/s, 8 clients, 2 replicas" + _median_of(two),
            f"{two['admissions_per_s']:.0f}",
            f"≥ {FLOOR_ADMISSIONS_PER_S:g}",
            two["admissions_per_s"] >= FLOOR_ADMISSIONS_PER_S,
        ),
        *_runs_row(two),
        _decisions_row(two),
        *latency_rows("2 replicas", two),
        _check_row("PostgreSQL: overbooking after 2 replicas" + _every(two), two["check"]),
        *_capacity_rows(two),
        (
            "PostgreSQL: admissions/s, 8 clients, 1 replica" + _median_of(one),
            f"{one['admissions_per_s']:.0f}",
            "",
            None,
        ),
        *_runs_row(one),
        _decisions_row(one),
        *latency_rows("1 replica", one),
        _check_row("PostgreSQL: overbooking after 1 replica" + _every(one), one["check"]),
        ("2 replicas / 1 replica (admissions/s)", f"×{ratio:.2f}", "", None),
        (
            "PostgreSQL: ReservationService.reserve p50 (no HTTP, 1 thread)",
            ms(result["in_process"]["p50_ms"]),
            "",
            None,
        ),
    ]
    return rows


def comparison_rows(result: dict[str, Any]) -> list[TableRow]:
    """`--baseline`: each side's 2-replica runs, and this checkout's rate over the baseline's."""
    if "skipped" in result:
        return [("PostgreSQL", result["skipped"], "", None)]
    now, then, revision = result["current"], result["baseline"], result["revision"]
    rows: list[TableRow] = []
    for name, run in (("this checkout", now), (f"baseline {revision}", then)):
        rows += [
            (
                f"{name}: admissions/s, 8 clients, 2 replicas" + _median_of(run),
                f"{run['admissions_per_s']:.0f}",
                "",
                None,
            ),
            *_runs_row(run),
            _decisions_row(run),
            *latency_rows(name, run),
            _check_row(f"{name}: overbooking" + _every(run), run["check"]),
        ]
    ratio = now["admissions_per_s"] / then["admissions_per_s"] if then["admissions_per_s"] else 0
    rows.append(
        (
            f"this checkout / {revision} (median admissions/s)",
            f"×{ratio:.2f}",
            "≥ ×1 (no drop)",
            ratio >= 1.0,
        )
    )
    return rows


def compare_failures(result: dict[str, Any]) -> list[str]:
    """`failures` of a `--baseline` run: overbooking or unexpected statuses on either side."""
    runs = {}
    for key, done in result.items():
        if key.startswith("runs_"):
            side = key.removeprefix("runs_")
            runs.update({f"{side} run {n + 1}": r for n, r in enumerate(done)})
    return _problems(runs)


def _median_of(result: dict[str, Any]) -> str:
    runs = result.get("all_admissions_per_s", [])
    return f" (median of {len(runs)} runs)" if len(runs) > 1 else ""


def _every(result: dict[str, Any]) -> str:
    return ", every run" if len(result.get("all_admissions_per_s", [])) > 1 else ""


def _runs_row(result: dict[str, Any]) -> list[TableRow]:
    """Every run's admissions/s in the order run, when there were several."""
    runs = result.get("all_admissions_per_s", [])
    if len(runs) < 2:
        return []
    return [("  every run, in order", " / ".join(f"{r:.0f}" for r in runs), "", None)]


def _capacity_rows(result: dict[str, Any]) -> list[TableRow]:
    """The same client threads on GET /healthz of the same replicas: HTTP alone.

    The clients' own CPU per request says what they could issue on a free
    core; the rate is bounded by the servers' HTTP handling too.
    """
    capacity = result.get("client_capacity")
    if not capacity:
        return []
    cpu = capacity["cpu_ms_per_request"].get("clients")
    spent = f", client CPU {cpu:.2f} ms/request" if cpu is not None else ""
    value = f"{capacity['requests_per_s']:,}/s (p50 {ms(capacity['p50_ms'])}){spent}"
    return [("  the same clients on GET /healthz (HTTP alone)", value, "", None)]


def _check_row(label: str, check: dict[str, Any]) -> TableRow:
    value = f"{check['overbooked']} link directions over, {check['booked']:,} booked"
    return (label, value, "0", check["overbooked"] == 0)


def print_table(console: Console, rows: list[TableRow], title: str, caption: str) -> None:
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for name, justify in (("metric", "left"), ("value", "right"), ("floor", "right")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    table.add_column("met?", justify="center")
    for metric, value, floor, met in rows:
        verdict = "" if met is None else ("[green]yes[/]" if met else "[bold red]NO[/]")
        table.add_row(metric, value, floor, verdict)
    console.print(table)


def fsync_probe_ms(folder: Path, count: int = 50) -> float | None:
    """Median time of fsync after a 4 KiB write here: what a durable SQLite commit waits for."""
    times = []
    with (folder / "fsync.probe").open("wb") as out:
        for _ in range(count):
            out.write(b"x" * 4096)
            out.flush()
            began = time.perf_counter()
            os.fsync(out.fileno())
            times.append(time.perf_counter() - began)
    return percentile_ms(times, 0.5)


def machine_line(machine: dict[str, Any]) -> str:
    before, after = machine["load_before"][0], machine["load_after"][0]
    return (
        f"{machine['cpus']} CPUs, Python {machine['python']}; load average {before:.1f} at the "
        f"start, {after:.1f} at the end (other processes share the CPUs: see 'others'); "
        f"fsync p50 {ms(machine['fsync_p50_ms'])}"
    )


def write_json(path: str, document: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(document, indent=2))


def failures(sqlite: dict[str, Any], pg: dict[str, Any]) -> list[str]:
    """Anything that makes the run wrong rather than slow: overbooking, unexpected statuses."""
    runs = {"SQLite HTTP": sqlite["http"]}
    for key, done in pg.items():
        if key.startswith("runs_"):
            count = key.removeprefix("runs_")
            runs.update(
                {f"PostgreSQL {count} replica(s), run {n + 1}": r for n, r in enumerate(done)}
            )
    return _problems(runs)


def _problems(runs: dict[str, dict[str, Any]]) -> list[str]:
    """What makes each named run wrong: overbooking, statuses other than 201/409."""
    out = []
    for name, figures_ in runs.items():
        if figures_["check"]["overbooked"]:
            out.append(f"{name}: overbooking {figures_['check']['problems']}")
        if figures_["other"]:
            out.append(f"{name}: statuses other than 201/409: {figures_['other_statuses']}")
    return out


def _decisions_row(run: dict[str, Any]) -> TableRow:
    """Decisions/s with the share admitted: admissions/s is their product."""
    decided = run["decisions_per_s"]
    share = run["admissions_per_s"] / decided if decided else 0.0
    return ("  decisions/s (201 + 409); admitted", f"{decided:.0f}; {share:.0%}", "", None)
