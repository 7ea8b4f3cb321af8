"""Waiting for a `braid serve` process that tests or benches started to answer."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import httpx

__all__ = ["ServeNotReadyError", "wait_healthy"]


class ServeNotReadyError(RuntimeError):
    """The server exited, or did not answer `/healthz` in time; the message says which."""


def wait_healthy(
    url: str,
    process: subprocess.Popen[Any] | None = None,
    *,
    timeout: float = 90.0,
    verify: Any = True,
) -> None:
    """Return once `url`/healthz answers 200; raise at once if `process` exits first.

    The wait is long because it only bounds a hang: a loaded two-core test host
    can take tens of seconds to start a server that takes three when idle.

    `verify` is httpx's: an `ssl.SSLContext` trusting a test CA for HTTPS.
    """
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise ServeNotReadyError(f"braid serve exited with {process.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=1, verify=verify).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise ServeNotReadyError(f"braid serve did not answer {url}/healthz in {timeout:g} s")
        time.sleep(0.1)
