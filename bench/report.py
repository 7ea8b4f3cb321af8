"""Figures per row, the floors from the issue, and the Rich table."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from measure import Row, percentile_ms

# Medians the issue asks for (ms), by (topology, query); None where it sets none.
FLOORS_MS: dict[tuple[str, str], float] = {
    ("Kdl", "fixed"): 1.0,
    ("Esnet", "fixed"): 0.3,
    ("Kdl", "earliest"): 20.0,
    ("Esnet", "earliest"): 3.0,
    ("Kdl", "all-slots 7d"): 100.0,
    ("Esnet", "all-slots 7d"): 10.0,
    ("Kdl", "split k=4"): 20.0,
}
PLAN_FLOOR_PER_S = 1000.0

COLUMNS = (
    "topology",
    "nodes",
    "links",
    "query",
    "n",
    "braid median ms",
    "braid p95",
    "baseline median ms",
    "speed-up ×",
    "agree",
    "floor ms",
    "meets floor",
)


def row_figures(row: Row) -> dict[str, Any]:
    """One query kind's figures, JSON-ready."""
    braid_median = percentile_ms(row.braid_ns, 0.5)
    base_median = percentile_ms(row.base_ns, 0.5)
    floor = FLOORS_MS.get((row.topology, row.kind))
    return {
        "topology": row.topology,
        "nodes": row.nodes,
        "links": row.links,
        "query": row.kind,
        "n": len(row.braid_ns),
        "n_baseline": len(row.base_ns),
        "braid_median_ms": braid_median,
        "braid_p95_ms": percentile_ms(row.braid_ns, 0.95),
        "baseline_median_ms": base_median,
        "baseline_p95_ms": percentile_ms(row.base_ns, 0.95),
        "speedup": base_median / braid_median if base_median and braid_median else None,
        "agree": row.agree,
        "braid_better": row.braid_better,
        "bugs": len(row.bugs),
        "braid_feasible": row.feasible,
        "floor_ms": floor,
        "meets_floor": None if floor is None or braid_median is None else braid_median <= floor,
        "note": row.note,
        **row.extra,
    }


def plan_figures(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The two `braid plan` rows: in process and through the CLI."""
    if "skipped" in plan or not plan:
        note = plan.get("skipped", "not run")
        return [{"topology": "Esnet", "query": "braid plan", "note": note}]
    inproc, cli = plan["in_process"], plan["cli"]
    common = {"topology": "Esnet", "floor_per_s": PLAN_FLOOR_PER_S}
    return [
        {
            **common,
            "query": f"braid plan in-process ({plan['requests']} req)",
            "braid_median_ms": inproc["median_ms"],
            "braid_p95_ms": inproc["p95_ms"],
            "decisions_per_s": inproc["decisions_per_s"],
            "statuses": inproc["statuses"],
            "meets_floor": inproc["decisions_per_s"] >= PLAN_FLOOR_PER_S,
        },
        {
            **common,
            "query": "braid plan CLI (subprocess)",
            "decisions_per_s": cli["decisions_per_s"],
            "seconds": cli["seconds"],
            "exit_code": cli["exit_code"],
            "meets_floor": cli["exit_code"] == 0 and cli["decisions_per_s"] >= PLAN_FLOOR_PER_S,
        },
    ]


def summary_rows(rows: list[Row], plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [row_figures(r) for r in rows] + plan_figures(plan)


def _ms(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _agree(f: dict[str, Any]) -> str:
    if "agree" not in f:
        return "—"
    checked = f["agree"] + f["braid_better"] + f["bugs"]
    text = f"{f['agree']}/{checked}"
    if f["braid_better"]:
        text += f" +{f['braid_better']} braid"
    if f["bugs"]:
        text += f" [bold red]{f['bugs']} BUG[/]"
    return text


def _meets(f: dict[str, Any]) -> str:
    verdict = f.get("meets_floor")
    mark = "—" if verdict is None else ("[green]yes[/]" if verdict else "[red]NO[/]")
    if "decisions_per_s" in f:
        mark += f" {f['decisions_per_s']:,.0f}/s"
    return mark


def _floor(f: dict[str, Any]) -> str:
    if "floor_per_s" in f:
        return f"≥ {f['floor_per_s']:,.0f}/s"
    return _ms(f.get("floor_ms"))


def _count(f: dict[str, Any]) -> str:
    """Queries braid answered (and, if fewer, how many the baseline answered too)."""
    if "n" not in f:
        return ""
    if f["n_baseline"] and f["n_baseline"] != f["n"]:
        return f"{f['n']} ({f['n_baseline']})"
    return str(f["n"])


def print_table(console: Console, figures: list[dict[str, Any]], title: str) -> None:
    table = Table(title=title)
    for column in COLUMNS:
        table.add_column(column, justify="left" if column in ("topology", "query") else "right")
    for f in figures:
        speedup = f.get("speedup")
        table.add_row(
            f["topology"],
            str(f.get("nodes", "")),
            str(f.get("links", "")),
            f["query"],
            _count(f),
            _ms(f.get("braid_median_ms")),
            _ms(f.get("braid_p95_ms")),
            _ms(f.get("baseline_median_ms")),
            "—" if speedup is None else f"{speedup:.1f}",
            _agree(f),
            _floor(f),
            _meets(f),
        )
    console.print(table)
    for f in figures:
        if f.get("note"):
            console.print(f"[dim]{f['topology']} {f['query']}: {f['note']}[/]")
