"""The southbound driver an emulation session uses (`--driver direct|controller`).

`direct` programs the bridges with ovs-ofctl. `controller` starts a `braid
controller` process (os-ken, its own process since os-ken runs its own event
loop) on free local ports, points every bridge at it and waits until all
have connected; closing stops that process.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from braid.adapters.emulation.network import EmulatedNetwork
from braid.adapters.free_ports import free_ports
from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.direct import OfctlDriver
from braid.adapters.southbound.driver import SouthboundDriver, SouthboundError

CONNECT_SECONDS = 30.0


def make_driver(kind: str, net: EmulatedNetwork) -> tuple[SouthboundDriver, Callable[[], None]]:
    """A driver for the network's bridges, and what to call to shut it down."""
    if kind == "direct":
        return OfctlDriver(dict(net.bridges)), lambda: None
    if kind == "controller":
        return _start_controller(net)
    raise SouthboundError("", f"unknown driver {kind!r}; use direct or controller")


def _start_controller(net: EmulatedNetwork) -> tuple[SouthboundDriver, Callable[[], None]]:
    api, openflow = free_ports(2)
    # The API wants a token (closed by default): a fresh one per session, in a
    # file only this user can read, that the session's driver sends.
    token = secrets.token_urlsafe(32)
    fd, token_file = tempfile.mkstemp(prefix="braid-controller-", suffix=".token")
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "braid.adapters.southbound.osken_main",
         "--api", f"127.0.0.1:{api}", "--openflow", f"127.0.0.1:{openflow}",
         "--api-token-file", token_file],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    driver = ControllerDriver(f"127.0.0.1:{api}", token=token)

    def close() -> None:
        driver.close()
        with contextlib.suppress(OSError):
            os.unlink(token_file)
        for bridge in net.bridges.values():
            net.run(["ovs-vsctl", "--if-exists", "del-controller", bridge])
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()

    try:
        for bridge in net.bridges.values():
            net.run(["ovs-vsctl", "set-controller", bridge, f"tcp:127.0.0.1:{openflow}"])
        _wait_connected(driver, process, set(net.wiring.dpids.values()))
    except BaseException:
        close()
        raise
    return driver, close


def _wait_connected(
    driver: ControllerDriver, process: subprocess.Popen[str], dpids: set[int]
) -> None:
    deadline = time.monotonic() + CONNECT_SECONDS
    connected: set[int] = set()
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read() if process.stderr else ""
            raise SouthboundError("", f"braid controller exited: {err.strip()[-300:]}")
        with contextlib.suppress(SouthboundError):
            connected = set(driver.switches())
            if dpids <= connected:
                return
        time.sleep(0.3)
    missing = sorted(dpids - connected)
    raise SouthboundError("", f"switches {missing} did not connect to the controller in time")
