"""A background thread that runs one action every so many seconds until stopped."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Periodic:
    """Calls `action` every `period` seconds; an action that raises is logged and tried again
    next period (a dead thread would silently stop the work it does)."""

    def __init__(self, action: Callable[[], object], period: float, name: str) -> None:
        self._action = action
        self._period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            try:
                self._action()
            except Exception:
                log.exception("%s failed; trying again in %s s", self._thread.name, self._period)
