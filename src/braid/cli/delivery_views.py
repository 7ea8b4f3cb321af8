"""What `braid show ID --delivery` prints: a status line, then per direction a row per
sampling interval (offered, delivered, dropped in Mbit/s and the share of the booking)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from rich.console import Group
from rich.table import Table
from rich.text import Text

from braid.cli.client_views import bandwidth, when
from braid.cli.common import shown_zone

__all__ = ["delivery"]

STYLES: Final = {"ok": "green", "degraded": "bold red", "idle": "yellow", "unmeasured": "dim"}
EXPLAINED: Final = {
    "ok": "the traffic gets what it booked",
    "degraded": "under 95 % of the booked rate arrives while the sender offers at least that",
    "idle": "the sender offers less than the booked rate",
    "unmeasured": "no counters sampled yet (not installed, or braid programs no switches here)",
}


def delivery(view: Mapping[str, Any], zone: str | None = None) -> Group:
    status = str(view.get("status"))
    line = Text.assemble(
        f"reservation {view.get('reservation')}: delivery ",
        (status, STYLES.get(status, "")),
        f" against {bandwidth(view.get('booked'))} booked — {EXPLAINED.get(status, '')}",
    )
    parts: list[Text | Table] = [line]
    for direction in view.get("directions") or []:
        parts.append(_direction(direction, view.get("booked"), zone))
    return Group(*parts)


def _direction(direction: Mapping[str, Any], booked: object, zone: str | None) -> Table | Text:
    title = f"{direction.get('from')} → {direction.get('to')}: {direction.get('status')}"
    intervals: Sequence[Mapping[str, Any]] = direction.get("intervals") or []
    if not intervals:
        return Text(f"{title} (no interval yet)")
    share = direction.get("delivered_share")
    caption = shown_zone(zone)
    if isinstance(share, int | float):
        caption = f"mean {share:.1%} of {bandwidth(booked)}; {caption}"
    table = Table(title=title, caption=caption)
    table.add_column("interval start")
    for name in ("offered", "delivered", "dropped"):
        table.add_column(f"{name} Mbit/s", justify="right")
    table.add_column("% of booked", justify="right")
    for i in intervals:
        mark = " ⚠" if i.get("short") else ""
        mark += " (counters reset)" if i.get("reset") else ""
        table.add_row(
            when(i.get("start"), zone),
            f"{i.get('offered', 0):.2f}",
            f"{i.get('delivered', 0):.2f}",
            f"{i.get('dropped', 0):.2f}",
            f"{100 * float(i.get('booked_share', 0)):.1f}{mark}",
        )
    return table
