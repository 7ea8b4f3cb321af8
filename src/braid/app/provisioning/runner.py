"""The provisioner's loop in a thread of `braid serve`.

A quick pass every `tick` seconds notices new bookings, cancels and window
edges (it touches no switch unless something changed); a reconciling pass
every `reconcile_every` seconds reads every switch back and repairs drift.
The first pass after start-up reconciles, so a restart after a crash
converges at once. `wake()` runs a pass now (the service calls it after a
change that may be due already).

A failing switch is tried again after 1, 2, 4 … up to 60 s (the provisioner
keeps the count); the log says so once per try, not once per pass, and once
more when it answers again. A reservation that cannot be compiled is logged
when its reason first appears or changes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable

from braid.app.provisioning.ports import ProvisioningMetrics
from braid.app.provisioning.provisioner import PassReport, RulesProvisioner
from braid.core.provisioning.status import Phase

__all__ = ["ProvisioningLoop"]

log = logging.getLogger(__name__)


class ProvisioningLoop:
    def __init__(
        self,
        provisioner: RulesProvisioner,
        clock: Callable[[], int],
        *,
        tick: float = 1.0,
        reconcile_every: float = 30.0,
        metrics: ProvisioningMetrics | None = None,
    ) -> None:
        self.provisioner, self.clock = provisioner, clock
        self.tick, self.reconcile_every = tick, reconcile_every
        self.metrics = metrics
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last: PassReport | None = None
        self._problems: dict[str, str] = {}  # what the log said last, per reservation

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="braid-provisioner", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wake(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        reconciled_at = float("-inf")
        while not self._stop.is_set():
            due = time.monotonic() - reconciled_at >= self.reconcile_every
            self._wake.clear()
            report = self.run_pass(reconcile=due)
            if due and report is not None and report.leader:
                reconciled_at = time.monotonic()
            self._wake.wait(self._pause(report))

    def run_pass(self, *, reconcile: bool = False) -> PassReport | None:
        """One pass at the clock's time, logged; None if it raised (logged too)."""
        try:
            report = self.provisioner.step(self.clock(), reconcile=reconcile)
        except Exception:  # a pass must never kill the loop; the next one retries
            log.exception("provisioning pass failed")
            return None
        self.last = report
        if self.metrics is not None and report.leader:
            self.metrics.provisioning_pass(report.seconds, len(report.errors))
            if report.changed or reconcile:
                self._count_states()
        self._log(report)
        return report

    def _log(self, report: PassReport) -> None:
        for switch, attempt in report.failed.items():
            log.warning(
                "provisioning: switch %s: %s (failed %d time(s) in a row; next try in %d s)",
                switch, attempt.error, attempt.failures, attempt.retry_in,
            )  # fmt: skip
        for switch in report.recovered:
            log.warning("provisioning: switch %s answers again", switch)
        if not report.leader:
            return
        for rid, why in report.problems.items():
            if self._problems.get(rid) != why:
                log.warning("provisioning: reservation %s: %s", rid, why)
        self._problems = dict(report.problems)

    def _count_states(self) -> None:
        assert self.metrics is not None
        counts = Counter(s.phase.value for s in self.provisioner.store.statuses().values())
        self.metrics.provisioning_counts({phase.value: counts[phase.value] for phase in Phase})

    def _pause(self, report: PassReport | None) -> float:
        """Until the next window edge, but never longer than a tick."""
        if report is None or report.next_change is None:
            return self.tick
        return max(0.0, min(self.tick, report.next_change - self.clock()))
