"""Waiting for a switch, a process or a pass to get somewhere, within a generous bound."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

# An upper bound for the tests to see a change, not a performance figure.
WAIT_SECONDS: Final = 30.0


def wait_for(condition: Callable[[], bool], seconds: float = WAIT_SECONDS) -> bool:
    """True as soon as `condition()` is; its last answer once `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()
