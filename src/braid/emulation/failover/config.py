"""What `braid emulate failover` is asked to run and what each configuration found.

The degradations' delays and the thresholds the monitors and the probe
stream are judged by live here too: the run applies them and the report
states them, so both read them from one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Self

from braid.core.impulse import ImpulseAnalysis, Trace
from braid.emulation.options import RunOptions
from braid.emulation.session import SessionOptions

__all__ = [
    "DELAYS",
    "EXTENDED_MS",
    "MOVE_WINDOW",
    "SPLIT_MS",
    "THRESHOLD_MS",
    "Config",
    "ConfigResult",
    "FailoverOptions",
]

DELAYS: Final = {  # one-way, milliseconds
    "path-switch": {"primary": 4.0, "standby": 80.0},
    "rtt-extension": {"primary": 4.0, "standby": 8.0},
    "cut": {"primary": 4.0, "standby": 8.0},
}
EXTENDED_MS: Final = 80.0
# RTT: above every good path with its queue, and below every slow one, including the
# half-switched state in which one site is back on a fast path and the other is not yet
# (a slow one-way delay plus a fast one): else the site left behind never sees it.
THRESHOLD_MS: Final = 60.0
SPLIT_MS: Final = 40.0  # one way: a probe packet slower than this took the slow path
MOVE_WINDOW: Final = 1.5  # seconds after an event in which a slow probe packet counts


@dataclass(kw_only=True)
class FailoverOptions(RunOptions):
    period: float = 50.0  # T
    events: int = 10  # n
    methods: tuple[str, ...] = ("direct", "controller")
    degradations: tuple[str, ...] = ("path-switch", "rtt-extension")
    extra: tuple[int, ...] = (10, 100)  # extra flow entries per fail-over (direct, path switch)
    rate_hz: float = 10.0
    samples: int = 1  # k: probes over the threshold in a row
    fast_failover: bool = True
    bfd_ms: int = 50  # BFD's transmit and receive interval for ff-bfd
    seed: int = 1

    @classmethod
    def short(cls, session: SessionOptions | None = None) -> Self:
        return cls(period=10.0, events=3, degradations=("path-switch",), extra=(),
                   session=session or SessionOptions())  # fmt: skip


@dataclass(frozen=True, slots=True)
class Config:
    method: str
    degradation: str
    extra: int = 0

    @property
    def label(self) -> str:
        more = f" +{self.extra} flows" if self.extra else ""
        return f"{self.method}, {self.degradation}{more}"


@dataclass
class ConfigResult:
    config: Config
    t0: float
    events: list[float]
    trace: Trace
    analysis: ImpulseAnalysis
    rules_ms: list[float]  # detection to rules in the switch, both sites, every event
    moved_s: list[float | None]
    actions: dict[str, int] = field(default_factory=dict)
    lost_probes: int = 0
    log: list[dict[str, Any]] = field(default_factory=list)  # both sites' events, no probes
    forwarded: dict[str, int | None] = field(default_factory=dict)  # per path, at the end
    # per event: a site had failed over before it came (cut, RTT extension), so its
    # timings say nothing about the method and are left out of the medians
    early: list[bool] = field(default_factory=list)
