"""What the reservation service needs from outside besides its store: somewhere to count."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Metrics", "NoMetrics"]


class Metrics(Protocol):
    """Counts and timings of admissions and store operations (Prometheus in `braid serve`)."""

    def admitted(self, seconds: float) -> None: ...

    def rejected(self, reason: str, seconds: float) -> None: ...

    def store_time(self, operation: str, seconds: float) -> None:
        """`operation` ("write", "read") took `seconds`."""
        ...


class NoMetrics:
    """Counts nothing: a service that nobody scrapes (tests, emulations, benches)."""

    def admitted(self, seconds: float) -> None:
        del seconds

    def rejected(self, reason: str, seconds: float) -> None:
        del reason, seconds

    def store_time(self, operation: str, seconds: float) -> None:
        del operation, seconds
