"""What counts as degraded, as recovered and as a lost target; checked on entry."""

from __future__ import annotations

import math
from dataclasses import dataclass

from braid.core.errors import InputError

__all__ = ["DetectionRule"]


@dataclass(frozen=True, slots=True)
class DetectionRule:
    """Degraded when any enabled test holds; None disables the loss and throughput tests.

    A probe that got no answer counts as over the RTT threshold: a cut path
    loses the probes, and the seed's path switch drops what is in flight.
    """

    rtt_threshold_ms: float = 50.0
    rtt_samples: int = 3  # k consecutive probes over the threshold
    loss_percent: float | None = None  # lost share of the last `loss_window` probes
    loss_window: int = 20
    throughput_floor_bps: float | None = None
    throughput_samples: int = 3  # consecutive readings under the floor
    recover_samples: int = 5  # consecutive good probes: recovered, armed again
    hold_down_s: float = 0.5  # after an action: results of older probes are ignored this long
    lost_after_s: float = 3.0  # no answer for this long: the target is lost
    retry_s: float = 2.0  # failed over yet still degraded this long after: act again
    paths: tuple[str, ...] = ("primary", "standby")
    alternate: bool = False  # each fail-over to the next path, else always to paths[1]

    def check(self) -> None:
        _number(self.rtt_threshold_ms, "rtt_threshold_ms", 0.0, 600_000.0)
        _count(self.rtt_samples, "rtt_samples")
        if self.loss_percent is not None:
            _number(self.loss_percent, "loss_percent", 0.0, 100.0)
        _count(self.loss_window, "loss_window")
        if self.throughput_floor_bps is not None:
            _number(self.throughput_floor_bps, "throughput_floor_bps", 0.0, math.inf)
        _count(self.throughput_samples, "throughput_samples")
        _count(self.recover_samples, "recover_samples")
        _number(self.hold_down_s, "hold_down_s", -1.0, 3600.0)
        _number(self.lost_after_s, "lost_after_s", 0.0, 86_400.0)
        _number(self.retry_s, "retry_s", 0.0, 86_400.0)
        if len(self.paths) < 2 or len(set(self.paths)) != len(self.paths):
            raise InputError("paths", f"{list(self.paths)}: name at least two different paths")


def _number(value: float, field: str, above: float, most: float) -> None:
    if not math.isfinite(value) or not above < value <= most:
        raise InputError(
            field, f"{value} is out of range: must be above {above} and at most {most}"
        )


def _count(value: int, field: str) -> None:
    if not 1 <= value <= 100_000:
        raise InputError(field, f"{value} is out of range: must be 1 to 100000")
