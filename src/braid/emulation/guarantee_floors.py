"""The floors `braid emulate guarantees` holds enforcement to, and what it found.

From the issue that asked for enforcement: under a best-effort flood each
reservation gets at least 98 % of its rate; a `hard` over-sender at most
102 %; a `soft` over-sender takes from no other reservation; TCP over a
`hard` reservation at a 50 ms round trip at least 90 %; best effort gets
what the reservations leave, and the whole link when they are idle. Only the
enforced run is held to them; the run with enforcement off is what they
compare with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from braid.emulation.report import FloorCheck, Report

__all__ = ["RESERVATION_PCT", "TCP_PCT", "judge", "link_goodput"]

RESERVATION_PCT: Final = 98.0
HARD_CEILING_PCT: Final = 102.0
TCP_PCT: Final = 90.0
REMAINDER_PCT: Final = 98.0  # best effort's share of what is left, as for a reservation
ENFORCED: Final = "enforced"
BASELINE: Final = "enforcement off"
TRICKLE_MBPS: Final = 0.5
_UDP_HEADERS: Final = 46  # Ethernet 14 + 802.1Q 4 + IPv4 20 + UDP 8 per one-frame datagram


def link_goodput(link_bps: int, mtu: int) -> float:
    """The payload rate a link carries in full-MTU UDP datagrams: the most any mix of
    flows delivers (TCP's headers are larger, so this is the strict measure)."""
    payload = mtu - 28
    return link_bps * payload / (payload + _UDP_HEADERS)


def _rows(report: Report, mode: str, phase: str) -> dict[str, Mapping[str, Any]]:
    return {r["flow"]: r for r in report.rows if r["mode"] == mode and r["phase"] == phase}


def judge(report: Report, link_bps: int, mtu: int) -> None:
    """Floors on the enforced run, findings against the baseline when both ran."""
    together = _rows(report, ENFORCED, "together")
    if together:
        _reservation_floors(report, together)
        _best_effort_floors(report, together, _rows(report, ENFORCED, "reservations idle"),
                            link_goodput(link_bps, mtu))  # fmt: skip
    for mode in (BASELINE, ENFORCED):
        _findings(report, mode, _rows(report, mode, "together"), link_bps, mtu)
    _compare(report, _rows(report, BASELINE, "together"), together)


def _reserved(rows: Mapping[str, Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in rows.values() if r["booked_mbps"] is not None]


def _reservation_floors(report: Report, rows: Mapping[str, Mapping[str, Any]]) -> None:
    for row in _reserved(rows):
        tcp = row["flow"].startswith("TCP")
        floor = TCP_PCT if tcp and row["policing"] == "hard" else RESERVATION_PCT
        name = f"{row['flow']} ({row['policing']}): delivered / booked under the flood"
        report.floors.append(FloorCheck(name, row["percent_of_booked"], floor))
        if row["policing"] == "hard" and not tcp:
            report.floors.append(
                FloorCheck(f"{row['flow']} (hard): at most its booking", row["percent_of_booked"],
                           HARD_CEILING_PCT, at_most=True)
            )  # fmt: skip
    for soft in (r for r in _reserved(rows) if r["policing"] == "soft"):
        report.floors.append(_soft_taking(soft, [r for r in _reserved(rows) if r is not soft]))


def _soft_taking(soft: Mapping[str, Any], others: list[Mapping[str, Any]]) -> FloorCheck:
    """What a soft over-sender can have taken from the others: its rate above its booking,
    as far as another reservation fell short of its own floor at the same time (excess
    taken from what the others left unused is best effort's, not theirs)."""
    excess = max(0.0, soft["delivered_mbps"] - soft["booked_mbps"])
    short = sum(max(0.0, r["booked_mbps"] * _floor_of(r) / 100 - r["delivered_mbps"])
                for r in others)  # fmt: skip
    return FloorCheck(
        f"{soft['flow']} (soft): taken from the other reservations",
        min(excess, short),
        soft["booked_mbps"] * (HARD_CEILING_PCT - 100) / 100,
        unit=" Mbit/s",
        at_most=True,
    )


def _floor_of(row: Mapping[str, Any]) -> float:
    tcp = row["flow"].startswith("TCP") and row["policing"] == "hard"
    return TCP_PCT if tcp else RESERVATION_PCT


def _best_effort(rows: Mapping[str, Mapping[str, Any]]) -> float:
    return sum(float(r["delivered_mbps"]) for r in rows.values() if r["booked_mbps"] is None)


def _best_effort_floors(
    report: Report,
    together: Mapping[str, Mapping[str, Any]],
    idle: Mapping[str, Mapping[str, Any]],
    goodput_bps: float,
) -> None:
    capacity = goodput_bps / 1e6
    left = capacity - sum(r["delivered_mbps"] for r in _reserved(together))
    if left > 0:
        report.floors.append(
            FloorCheck("best effort, reservations busy: delivered / what they leave",
                       100 * _best_effort(together) / left, REMAINDER_PCT)
        )  # fmt: skip
    if idle:
        report.floors.append(
            FloorCheck("best effort, reservations idle: delivered / the link's goodput",
                       100 * _best_effort(idle) / capacity, REMAINDER_PCT)
        )  # fmt: skip


def _findings(
    report: Report, mode: str, rows: Mapping[str, Mapping[str, Any]], link_bps: int, mtu: int
) -> None:
    if not rows:
        return
    capacity = link_goodput(link_bps, mtu) / 1e6
    parts = [
        f"{r['flow']} {r['delivered_mbps']:.1f} of {r['booked_mbps']:g} "
        f"({r['percent_of_booked']:.1f} %)"
        for r in _reserved(rows)
    ]
    reserved = sum(r["delivered_mbps"] for r in _reserved(rows))
    report.findings.append(
        f"{mode}: " + "; ".join(parts) + f"; best effort {_best_effort(rows):.1f} of the "
        f"{max(capacity - reserved, 0):.1f} Mbit/s the reservations left"
    )
    for row in _reserved(rows):
        if row["flow"].endswith("over-sender"):
            report.findings.append(
                f"{mode}: {row['flow']} sent {row['sent_mbps']:.1f} Mbit/s, got "
                f"{100 * row['delivered_mbps'] / capacity:.1f} % of the link"
            )


def _compare(
    report: Report,
    baseline: Mapping[str, Mapping[str, Any]],
    enforced: Mapping[str, Mapping[str, Any]],
) -> None:
    for name, row in enforced.items():
        before = baseline.get(name)
        if before is None:
            continue
        now, then = row["delivered_mbps"], before["delivered_mbps"]
        if then < TRICKLE_MBPS:  # a ratio to next to nothing says nothing
            told = f"{now:.1f} Mbit/s enforced, {then:.2f} with enforcement off"
        else:
            told = (
                f"{now:.1f} Mbit/s enforced vs {then:.1f} with enforcement off ({now / then:.2f}x)"
            )
        report.findings.append(f"{name}: {told}")
