"""A real `braid serve` with the example network, and headless Chromium to drive it.

The browser tests need Debian's Chromium (`apt-get install chromium`) and
Playwright for Python (in the `dev` extra; it cannot fetch its own browser
here, so it drives the system one). Without them the tests skip with the
reason, except in CI (`CI=true`), where they fail instead.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from braid.adapters.free_ports import free_port
from braid.testing.serving import wait_healthy

if TYPE_CHECKING:
    from playwright.sync_api import Browser

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "science-net.yaml"
BRAID = Path(sys.executable).with_name("braid")
SHOTS = Path(os.environ.get("BRAID_UI_SHOTS", "")) if os.environ.get("BRAID_UI_SHOTS") else None


@dataclass(frozen=True)
class Server:
    url: str
    tokens: dict[str, str]
    database: str


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def require_browser() -> str:
    """Chromium's path; skip (fail under CI=true) without it or without Playwright."""
    problems = []
    path = chromium()
    if path is None:
        problems.append("no chromium (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("no playwright (pip install -e '.[dev]')")
    if path is not None and not problems:
        return path
    reason = "browser test needs " + "; ".join(problems)
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(reason + " (CI=true: failing instead of skipping)")
    pytest.skip(reason)


def make_token(database: str, user: str, role: str) -> str:
    done = subprocess.run(
        [str(BRAID), "token", "create", "--user", user, "--role", role, "--database", database],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"brd_[A-Za-z0-9_-]+", done.stdout)
    assert found, done.stdout + done.stderr
    return found.group(0)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    """`braid serve` on a free port over a fresh SQLite file; tokens for alice and olga."""
    database = f"sqlite:///{tmp_path / 'braid.db'}"
    tokens = {"alice": make_token(database, "alice", "user")}
    tokens["olga"] = make_token(database, "olga", "operator")
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    where = ["--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        [str(BRAID), "serve", "--topology", str(EXAMPLE), "--database", database, *where],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        yield Server(url, tokens, database)
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


@pytest.fixture
def browser() -> Iterator[Browser]:
    path = require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()
