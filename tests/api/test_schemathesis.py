"""Property-based run of every documented operation: whatever is sent, never a 500.

Bounded: at most 100 generated cases per operation (~15 s in all), sent with
an operator's token so that the operator-only routes are reached too.
"""

from __future__ import annotations

from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings

from tests.api.harness import build

API = build()
schema = schemathesis.openapi.from_asgi("/openapi.json", API.app)


def reach_the_planner(case: Any) -> None:
    """Random node ids are almost never in the topology; swap in real ones for half the
    cases (chosen by the generated id's length, so runs stay reproducible) so that the
    generated bandwidths, times and modes get past the first check."""
    for where in (case.body, case.query):
        if not isinstance(where, dict):
            continue
        src, dst = where.get("src"), where.get("dst")
        if isinstance(src, str) and isinstance(dst, str) and len(src) % 2 == 0:
            where["src"], where["dst"] = "ORNL", "NERSC"


@schema.parametrize()
@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,  # the same cases every run: a failure here is always reproducible
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_500(case: Any) -> None:
    reach_the_planner(case)
    case.headers = {**(case.headers or {}), **API.auth("olga")}
    response = case.call()
    # Without --domains the interdomain routes answer 503 by design.
    unconfigured = response.status_code == 503 and case.path.startswith("/v1/interdomain")
    assert response.status_code < 500 or unconfigured, f"{case.method} {case.path}: {response.text}"
