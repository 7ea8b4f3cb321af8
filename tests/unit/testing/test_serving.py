"""Waiting for a started server: a process that exits or never answers is said at once."""

from __future__ import annotations

import subprocess
import sys

import pytest

from braid.testing.serving import ServeNotReadyError, wait_healthy


def test_a_server_that_exits_is_reported_with_its_code() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    gone.wait()
    with pytest.raises(ServeNotReadyError, match="exited with 3"):
        wait_healthy("http://127.0.0.1:9", gone)


def test_a_server_that_never_answers_names_the_url() -> None:
    with pytest.raises(ServeNotReadyError, match=r"http://127.0.0.1:9/healthz in 0.3 s"):
        wait_healthy("http://127.0.0.1:9", timeout=0.3)
