"""`/healthz` and `/metrics`: unauthenticated, for load balancers and Prometheus."""

from __future__ import annotations

import logging

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from braid.adapters.api.deps import Service
from braid.adapters.api.errors import error_response
from braid.adapters.api.models import ErrorOut, HealthOut
from braid.app import operations

router = APIRouter(tags=["health"])
log = logging.getLogger(__name__)


@router.get(
    "/healthz",
    response_model=HealthOut,
    responses={503: {"model": ErrorOut, "description": "the store cannot be read"}},
)
def healthz(service: Service) -> JSONResponse:
    """Healthy when the store answers; reads it, so a lost database shows here."""
    try:
        version = service.repo.topology_version()
    except Exception:
        log.exception("health check: the store did not answer")
        return error_response(503, "unavailable", "the store does not answer")
    return JSONResponse({"status": "ok", "topology_version": version})


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}},
)
def metrics(service: Service) -> Response:
    """Admissions, rejections, decision time, HTTP requests and link utilisation now."""
    text = service.metrics.render(lambda: operations.utilisation(service))
    return Response(text, media_type=CONTENT_TYPE_LATEST)
