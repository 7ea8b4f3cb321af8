"""Fixtures of the `braid emulate` end-to-end tests (Mininet + the system's Open vSwitch).

Without root, Open vSwitch, Mininet, iperf3, ethtool or tc htb the tests skip
and say what is missing; with CI=true they fail instead, so CI never passes
by skipping.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from braid.adapters.emulation.prereqs import missing_prerequisites
from braid.adapters.emulation.sweep import exclusive, sweep


def require_emulation() -> None:
    missing = missing_prerequisites()
    if not missing:
        return
    reason = "braid emulate needs: " + "; ".join(str(m) for m in missing)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + " (CI=true: failing instead of skipping)")
    pytest.skip(reason)


@pytest.fixture
def emulation_host() -> Iterator[None]:
    """A host ready for emulations; whatever a test leaves behind is swept afterwards."""
    require_emulation()
    try:
        yield
    finally:
        with exclusive():  # never sweep away another process's live emulation
            leftovers = sweep()
        assert not leftovers, f"the emulation left {leftovers} behind"
