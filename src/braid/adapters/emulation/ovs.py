"""Open vSwitch with the userspace datapath: start it when it is not running.

Hosts without the OVS kernel module (containers, CI runners) can still run
OVS: `ovs-vswitchd --disable-system` forwards in userspace, and bridges need
`datapath_type=netdev` (Mininet: `OVSSwitch(datapath='user')`).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

OVS_CTL: Final = Path("/usr/share/openvswitch/scripts/ovs-ctl")
RUN_DIR: Final = Path("/var/run/openvswitch")


class OvsError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class OvsStart:
    """What `ensure_ovs` had to start, so that `stop_ovs` stops only that."""

    started_db: bool
    started_switchd: bool


def ensure_ovs() -> OvsStart:
    """Start ovsdb-server and a userspace ovs-vswitchd when they are not running."""
    started_db = False
    if _run(["ovs-vsctl", "--timeout=3", "show"]) != 0:
        if not OVS_CTL.exists():
            raise OvsError(f"{OVS_CTL} is missing; apt-get install openvswitch-switch")
        _check(
            [str(OVS_CTL), "--no-ovs-vswitchd", "--system-id=random", "start"],
            "starting ovsdb-server",
        )
        started_db = True
    started_switchd = False
    if _run(["ovs-appctl", "-t", "ovs-vswitchd", "version"]) != 0:
        _check(
            [
                "ovs-vswitchd",
                "--disable-system",
                "--detach",
                "--pidfile",
                "--log-file",
                "--no-chdir",
                f"unix:{RUN_DIR / 'db.sock'}",
            ],
            "starting ovs-vswitchd (userspace datapath)",
        )
        started_switchd = True
        _wait_for_switchd()
    return OvsStart(started_db, started_switchd)


def stop_ovs(started: OvsStart) -> None:
    """Stop what `ensure_ovs` started, and nothing else."""
    if started.started_switchd:
        _run(["ovs-appctl", "-t", "ovs-vswitchd", "exit"])
    if started.started_db:
        _run([str(OVS_CTL), "--no-ovs-vswitchd", "stop"])


def _wait_for_switchd(timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _run(["ovs-appctl", "-t", "ovs-vswitchd", "version"]) == 0:
            return
        time.sleep(0.2)
    raise OvsError("ovs-vswitchd did not come up; see /var/log/openvswitch/ovs-vswitchd.log")


def _check(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise OvsError(f"{what} failed: {detail[0]}")


def _run(argv: list[str]) -> int:
    try:
        done = subprocess.run(argv, capture_output=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 1
    return done.returncode
