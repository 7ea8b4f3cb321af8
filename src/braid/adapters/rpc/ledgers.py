"""After a run: sum every domain's bookings and holds against what the orchestrator decided.

Nothing leaked (no hold still HELD once everything settled), nothing
overbooked (no link direction's peak above its capacity), and every domain
agrees with the outcome: booked for each committed reservation it carries,
booked for nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from braid.adapters.rpc.v1 import negotiation_pb2 as pb


@dataclass
class LedgerCheck:
    held: list[str] = field(default_factory=list)
    overbooked: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    booked_bps: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not (self.held or self.overbooked or self.wrong)

    def summary(self) -> str:
        if self.ok:
            total = sum(self.booked_bps.values())
            return f"ledgers agree: 0 leaked, 0 overbooked ({total / 1e9:g} Gbit/s booked)"
        return "; ".join(self.held + self.overbooked + self.wrong)


def check_ledgers(
    reports: Mapping[str, pb.StatusReport], committed: Mapping[str, frozenset[str]]
) -> LedgerCheck:
    """`committed` maps each committed transaction id to the domains that must hold it booked."""
    check = LedgerCheck()
    for domain, report in reports.items():
        booked = 0
        for tx in report.transactions:
            if tx.state == pb.HOLD_STATE_HELD:
                check.held.append(f"{domain} still holds {tx.transaction_id}")
            if tx.state == pb.HOLD_STATE_COMMITTED:
                booked += sum(s.bandwidth_bps for s in tx.segments)
                if domain not in committed.get(tx.transaction_id, frozenset()):
                    check.wrong.append(f"{domain} booked {tx.transaction_id}, not committed there")
        check.booked_bps[domain] = booked
        for link in report.links:
            if link.peak_bps > link.capacity_bps:
                check.overbooked.append(
                    f"{domain} link {link.link} peaks at {link.peak_bps} > {link.capacity_bps}"
                )
    for tx_id, domains in committed.items():
        for domain in domains:
            found = reports.get(domain)
            states = {t.transaction_id: t.state for t in found.transactions} if found else {}
            if found is not None and states.get(tx_id) != pb.HOLD_STATE_COMMITTED:
                check.wrong.append(f"{domain} did not book committed {tx_id}")
    return check


def committed_of(results: list[pb.ReservationResp]) -> dict[str, frozenset[str]]:
    """Committed transactions and their participant domains, from the orchestrator's answers."""
    return {
        r.transaction_id: frozenset(s.domain for p in r.paths for s in p.segments)
        for r in results
        if r.success
    }
