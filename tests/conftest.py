"""Suite-wide: without PostgreSQL, say so once instead of once per skipped test."""

from __future__ import annotations

import os

import pytest

POSTGRES_ENV = "BRAID_TEST_POSTGRES_URL"
_DESELECTED: list[pytest.Item] = []


def _needs_postgres(item: pytest.Item) -> bool:
    fixtures = getattr(item, "fixturenames", ())
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    wanted = {"postgres_database", "throwaway_postgres"}
    return bool(wanted & set(fixtures)) or "postgres" in params


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Under CI the PostgreSQL tests must run: their fixtures fail loudly without a server.
    if os.environ.get(POSTGRES_ENV) or os.environ.get("CI") == "true":
        return
    kept = [item for item in items if not _needs_postgres(item)]
    _DESELECTED[:] = [item for item in items if _needs_postgres(item)]
    if _DESELECTED:
        config.hook.pytest_deselected(items=_DESELECTED)
        items[:] = kept


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # Under pytest-xdist the workers deselect; the controller only sees what ran.
    ran_store_tests = any(
        "tests/integration/" in getattr(report, "nodeid", "")
        for report in terminalreporter.stats.get("passed", [])
    )
    skipping = not os.environ.get(POSTGRES_ENV) and os.environ.get("CI") != "true"
    if _DESELECTED or (skipping and ran_store_tests):
        count = f"{len(_DESELECTED)} " if _DESELECTED else ""
        terminalreporter.write_line(
            f"{count}PostgreSQL tests not run: {POSTGRES_ENV} is not set; "
            f'export {POSTGRES_ENV}="$(scripts/pg-test-server)" runs them'
        )
