"""What every experiment's runs share: rate scale, run length, warm-up, the session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

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

    @classmethod
    def short(cls, session: SessionOptions | None = None) -> Self:
        """A few seconds per run and fewer runs (for CI); experiments narrow it further."""
        return cls(seconds=2.0, omit=1, session=session or SessionOptions())

    @classmethod
    def of(cls, session: SessionOptions, short: bool) -> Self:
        """The options `braid emulate NAME [--short]` starts from."""
        return cls.short(session) if short else cls(session=session)
