"""Throughput from an interface's byte counters (/sys/class/net/IF/statistics)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["InterfaceRate"]


class InterfaceRate:
    """Bits per second through `interface` (received or sent) since the last reading."""

    def __init__(
        self,
        interface: str,
        direction: str = "rx",
        root: Path = Path("/sys/class/net"),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if direction not in ("rx", "tx"):
            raise ValueError(f"direction: {direction!r} must be rx or tx")
        self.path = root / interface / "statistics" / f"{direction}_bytes"
        self._clock = clock
        self._last: tuple[float, int] | None = None

    def read(self) -> float | None:
        """The rate since the previous call; None on the first call or when unreadable."""
        try:
            count = int(self.path.read_text())
        except (OSError, ValueError):
            self._last = None
            return None
        now = self._clock()
        last, self._last = self._last, (now, count)
        if last is None or now <= last[0] or count < last[1]:
            return None
        return 8 * (count - last[1]) / (now - last[0])
