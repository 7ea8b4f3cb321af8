"""`/healthz` (unauthenticated, for load balancers) and `/metrics` (for Prometheus).

/metrics wants an operator's or a monitor's bearer token, unless the server
runs with `metrics_open` (`braid serve --metrics-open` or `--insecure`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from braid.adapters.api.deps import MetricsReader, service_of
from braid.adapters.api.errors import error_response
from braid.adapters.api.fastjson import FastJSON
from braid.adapters.api.models import ErrorOut, HealthOut
from braid.adapters.api.offload import off_loop
from braid.adapters.prometheus import PrometheusMetrics
from braid.app.reservations.observation import observe

router = APIRouter(tags=["health"])
log = logging.getLogger(__name__)

# How long a store's answer to /healthz stands for the next ones.
FRESH_SECONDS: Final = 1.0


class StoreCheck:
    """The store's last good answer to /healthz, trusted for `seconds`.

    A load balancer polling several times a second then costs one store read
    a second, and a lost database still shows within `seconds`: a failure is
    never remembered, so every /healthz after the trusted answer has aged
    asks the store again. A topology PUT through this server forgets the
    answer, so its new version shows at once; another replica's shows within
    `seconds`.
    """

    def __init__(
        self, seconds: float = FRESH_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.seconds = seconds
        self.clock = clock
        self._answer: tuple[int, float] | None = None

    def fresh(self) -> int | None:
        """The topology version the store gave less than `seconds` ago, if any."""
        answer = self._answer
        if answer is None or answer[1] <= self.clock():
            return None
        return answer[0]

    def answered(self, version: int) -> None:
        self._answer = (version, self.clock() + self.seconds)

    def forget(self) -> None:
        self._answer = None


def store_check(request: Request) -> StoreCheck:
    check: StoreCheck = request.app.state.store_check
    return check


@router.get(
    "/healthz",
    response_model=HealthOut,
    responses={503: {"model": ErrorOut, "description": "the store cannot be read"}},
)
async def healthz(request: Request) -> JSONResponse:
    """Healthy when the store answers (asked at most once a second), so a lost database shows."""
    check = store_check(request)
    version = check.fresh()
    if version is None:
        try:
            version = await off_loop(service_of(request).stored_topology_version)
        except Exception:
            log.exception("health check: the store did not answer")
            return error_response(503, "unavailable", "the store does not answer")
        check.answered(version)
    return FastJSON({"status": "ok", "topology_version": version})


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {}}, "description": "Prometheus text format"},
        401: {"model": ErrorOut, "description": "no valid bearer token"},
        403: {"model": ErrorOut, "description": "a token of a role other than operator, monitor"},
    },
)
async def metrics(request: Request, _: MetricsReader) -> Response:
    """Admissions, rejections, decision time, HTTP requests, links, holds, replica lag.

    For operator and monitor tokens (unless the server runs with its metrics open)."""
    service = service_of(request)
    metrics: PrometheusMetrics = request.app.state.metrics
    text = await off_loop(metrics.render, lambda: observe(service.books))
    return Response(text, media_type=CONTENT_TYPE_LATEST)
