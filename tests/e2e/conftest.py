"""Shared fixtures of the end-to-end tests: a private Open vSwitch, a braid controller.

The tests need root and Open vSwitch. Without them they skip with the reason,
except in CI (`CI=true`), where a missing prerequisite fails them instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from braid.adapters.southbound.ovs_sandbox import OvsSandbox, missing_tools


def require_root_and_ovs() -> None:
    """Skip (fail under CI=true) unless running as root with Open vSwitch installed."""
    problems = []
    if os.geteuid() != 0:
        problems.append("not running as root")
    missing = missing_tools()
    if missing:
        problems.append(f"missing {', '.join(missing)} (apt-get install openvswitch-switch)")
    if not problems:
        return
    reason = "end-to-end test needs root and Open vSwitch: " + "; ".join(problems)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + " (CI=true: failing instead of skipping)")
    pytest.skip(reason)


@pytest.fixture
def ovs() -> Iterator[OvsSandbox]:
    """A private OVS (userspace datapath, own namespace), stopped and removed afterwards."""
    require_root_and_ovs()
    # A short path: Unix socket names are limited to about 100 characters.
    rundir = Path(tempfile.mkdtemp(prefix="braid-ovs-"))
    sandbox = OvsSandbox(rundir)
    try:
        sandbox.start()
        yield sandbox
    finally:
        sandbox.stop()
        shutil.rmtree(rundir, ignore_errors=True)


@pytest.fixture
def controller(ovs: OvsSandbox) -> Iterator[str]:
    """A `braid controller` process for `ovs`'s bridges; yields its API address."""
    process = ovs.start_controller()
    try:
        yield ovs.controller_api
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
