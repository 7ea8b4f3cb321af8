"""Remove what an emulation left behind: processes, bridges, veths (like `mn -c`).

Scoped to braid's own names (switches `be<N>`, hosts `bh<N>`), so that other
users of Open vSwitch or Mininet on the same host are left alone. Since those
names are fixed, one emulation runs at a time on a host: `exclusive()` is the
lock every emulated network holds, and sweeping takes it too, so a sweep never
removes a live emulation of another process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Final

LOCK_PATH: Final = Path("/run/braid-emulation.lock")
SWITCH_PREFIX: Final = "be"
HOST_PREFIX: Final = "bh"
_BRIDGE_RE: Final = re.compile(rf"^{SWITCH_PREFIX}\d+$")
_LINK_RE: Final = re.compile(rf"^(?:{SWITCH_PREFIX}|{HOST_PREFIX})\d+-eth\d+$")
_SHELL_MARK: Final = f"mininet:{HOST_PREFIX}"
_PROCESS_MARK: Final = b"BRAID_EMULATION=1"  # braid.adapters.emulation.iperf.MARK


class EmulationBusyError(RuntimeError):
    pass


@contextlib.contextmanager
def exclusive(timeout: float = 900.0) -> Iterator[None]:
    """Hold the host's emulation lock (waiting up to `timeout` seconds for it)."""
    with LOCK_PATH.open("a") as handle:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise EmulationBusyError(
                        f"another emulation holds {LOCK_PATH}; wait for it to finish"
                    ) from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def sweep() -> list[str]:
    """Kill braid's emulated hosts, delete its bridges and veths; say what was removed."""
    removed = [f"process {pid}" for pid in _kill_host_shells()]
    for bridge in _lines(["ovs-vsctl", "--timeout=5", "list-br"]):
        if _BRIDGE_RE.match(bridge):
            _run(["ovs-vsctl", "--timeout=5", "--if-exists", "del-br", bridge])
            removed.append(f"bridge {bridge}")
    for name in _links():
        if _LINK_RE.match(name):
            _run(["ip", "link", "delete", name])
            removed.append(f"link {name}")
    return removed


def _kill_host_shells() -> list[int]:
    """Host shells, and the processes braid started in their namespaces (which outlive them)."""
    killed: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if _SHELL_MARK in cmdline or _PROCESS_MARK in environ:
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
            except ProcessLookupError:
                pass
    return killed


def _links() -> list[str]:
    names = []
    for line in _lines(["ip", "-o", "link", "show"]):
        parts = line.split(":", 2)
        if len(parts) >= 2:
            names.append(parts[1].strip().split("@", 1)[0])
    return names


def _lines(argv: list[str]) -> list[str]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def _run(argv: list[str]) -> None:
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(argv, capture_output=True, check=False, timeout=30)
