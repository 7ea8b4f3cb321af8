"""`create_app`: the REST API over one `ReservationService`."""

from __future__ import annotations

from fastapi import FastAPI

from braid.adapters.api import (
    availability,
    delivery,
    health,
    links,
    me,
    reservations,
    tokens,
    topology,
)
from braid.adapters.api.api_docs import mount_api_docs
from braid.adapters.api.errors import install_error_handlers
from braid.adapters.api.interdomain import mount_interdomain
from braid.adapters.api.local_times import LocalTimes
from braid.adapters.api.middleware import RequestGuard
from braid.adapters.api.nsi import NsiEndpoint, mount_nsi
from braid.adapters.api.ui import mount_ui
from braid.adapters.prometheus import PrometheusMetrics
from braid.app.delivery.history import DeliveryHistory
from braid.app.interdomain import InterdomainService
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings

DESCRIPTION = """\
Guaranteed bandwidth between science sites, for a time window, over one path
or split over several. Send `Authorization: Bearer <token>` (`braid token create`).

Times are ISO 8601 with an offset (`2030-01-01T10:00:00Z`), or local times
(`2030-01-01 11:00 Europe/Paris`; without a zone, in your `tz` setting). Answers
give instants in UTC; add `?tz=Europe/Paris` (or `?tz=me`: your `tz` setting) to
any /v1 request and each instant `X` also comes as `X_local`, in that zone with
its offset, the zone named once as `local_tz`. Bandwidth is Mbit/s as a number
or a string with a unit (`"10G"`). Every error has the
shape `{"error": {"code", "message", "field"?, "alternatives"?, "conflicts"?}}`.
"""


def create_app(
    service: ReservationService,
    settings: Settings,
    interdomain: InterdomainService | None = None,
    nsi: NsiEndpoint | None = None,
    metrics: PrometheusMetrics | None = None,
    delivery_history: DeliveryHistory | None = None,
) -> FastAPI:
    """The FastAPI app; `service.start()` must have run (the app does not start it).

    Without `interdomain` the `/v1/interdomain` routes answer 503 and say how to
    configure them. `metrics` is what `/metrics` shows: give the service's own, so
    that its admissions are counted there too. `delivery_history` holds the delivery
    loop's samples (none: every reservation's delivery is unmeasured).
    """
    app = FastAPI(
        title="braid",
        version="1",
        description=DESCRIPTION,
        openapi_tags=[
            {"name": "reservations", "description": "book and manage bandwidth"},
            {"name": "availability", "description": "ask without booking"},
            {"name": "topology", "description": "the network and its maintenance (operators)"},
            {"name": "health", "description": "liveness and Prometheus metrics"},
        ],
        # braid exports Prometheus metrics (/metrics); FastAPI's own OpenTelemetry
        # hooks would only look for a provider on every request.
        telemetry={"tracing": False, "metrics": False, "logs": False},
        docs_url=None,  # mount_api_docs serves both pages with local assets
        redoc_url=None,
    )
    app.state.service = service
    app.state.settings = settings
    app.state.metrics = metrics = metrics or PrometheusMetrics()
    app.state.store_check = health.StoreCheck()
    # The routes themselves, not the routers: an included router is matched
    # as a nested level on every request. Reservations first: the busiest.
    for module in (reservations, delivery, availability, topology, links, me, tokens, health):
        app.router.routes.extend(module.router.routes)
    delivery.mount_delivery(app, delivery_history, settings.delivery_seconds)
    mount_interdomain(app, interdomain)
    if nsi is not None:
        mount_nsi(app, nsi)  # NSI CS 2.0 (SOAP) when the server has an NSI domain
    mount_ui(app)  # the web interface at /, over the routes above
    mount_api_docs(app)
    install_error_handlers(app)
    app.add_middleware(LocalTimes)  # inside the guard: counted, and its crashes caught
    app.add_middleware(RequestGuard, counter=metrics.requests, max_bytes=settings.max_body_bytes)
    return app
