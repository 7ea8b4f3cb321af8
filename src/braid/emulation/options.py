"""What every experiment's runs share: rate scale, run length, warm-up, the session."""

from __future__ import annotations

from dataclasses import dataclass, field

from braid.emulation.session import SessionOptions

__all__ = ["RunOptions"]


@dataclass(kw_only=True)
class RunOptions:
    """Each experiment's options extend these (and pick its own default scale).

    `scale` multiplies the seed's rates (emulated links are slower than the
    papers' testbeds); `seconds` is the measured length of an iperf3 run,
    after `omit` seconds of warm-up.
    """

    scale: float = 1.0
    seconds: float = 10.0
    omit: int = 2
    session: SessionOptions = field(default_factory=SessionOptions)
