"""The sampling pass in a thread of `braid serve`, every `period` seconds on the second.

Samples are stamped in whole seconds, so the thread wakes just after a
multiple of `period` on the wall clock: an interval between two samples is
then `period` seconds give or take the read's few milliseconds, where
sampling at arbitrary moments would make a 5 s interval look like 4 or 6
and its rates 20 % off.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from braid.app.delivery.sampler import DeliverySampler, SamplePass

__all__ = ["DeliveryLoop"]

log = logging.getLogger(__name__)

AFTER_THE_SECOND: Final = 0.02  # wake this far past the boundary, never just before it


class DeliveryLoop:
    def __init__(self, sampler: DeliverySampler, clock: Callable[[], int], period: float) -> None:
        self.sampler, self.clock, self.period = sampler, clock, period
        self.last: SamplePass | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="braid-delivery", daemon=True)
        self._failing: dict[str, str] = {}

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.wait(self.period - time.time() % self.period + AFTER_THE_SECOND):
            self.run_pass()

    def run_pass(self) -> SamplePass | None:
        try:
            done = self.sampler.sample(self.clock())
        except Exception:  # a pass must never kill the loop; the next one retries
            log.exception("delivery sampling failed")
            return None
        for rid, why in done.failed.items():
            if self._failing.get(rid) != why:
                log.warning("delivery: cannot read reservation %s: %s", rid, why)
        self._failing = dict(done.failed)
        self.last = done
        return done
