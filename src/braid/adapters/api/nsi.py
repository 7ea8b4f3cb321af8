"""NSI CS 2.0 in `braid serve`: the SOAP provider service and the NSI documents.

    POST /NSI/services/CS2             reserve, reserveCommit, reserveAbort, provision,
                                       release, terminate, querySummary(Sync), queryRecursive
    GET  /NSI/DOMAIN:topology.nml.xml  braid's topology as an NML network
    GET  /NSI/discovery.xml            the NSA discovery document

Mounted only when the server has an NSI domain (`nsi_domain`). A request is
answered at once (reserveResponse, an acknowledgment, a sync query's result,
or a SOAP fault with NSI's errorId); its confirmations go to the requester's
replyTo once that answer is out. Calls block on the store, so they run in
the thread pool.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from braid.adapters.nsi.client_certificates import client_subject
from braid.adapters.nsi.documents import discovery_document, nml_document, topology_path
from braid.adapters.nsi.replies import acknowledgment, encode, reserve_response
from braid.adapters.nsi.soap import Request as NsiRequest
from braid.adapters.nsi.soap import decode_request, fault
from braid.app.nsi.messages import (
    GenericRequest,
    Header,
    Outgoing,
    QueryRequest,
    SummaryConfirmed,
)
from braid.app.nsi.ports import Courier
from braid.app.nsi.provider import Answer, NsiProvider
from braid.core.nsi.errors import INTERNAL_ERROR, NsiError

__all__ = ["NsiEndpoint", "mount_nsi"]

log = logging.getLogger(__name__)
XML = "text/xml; charset=utf-8"


@dataclass(frozen=True)
class NsiEndpoint:
    """The provider, the courier that delivers its confirmations, and this server's base URL."""

    provider: NsiProvider
    courier: Courier
    base_url: str
    started: int


def mount_nsi(app: FastAPI, endpoint: NsiEndpoint) -> None:
    provider = endpoint.provider

    async def cs2(request: Request) -> Response:
        body = await request.body()
        return await run_in_threadpool(_answer, endpoint, body, client_subject(request))

    async def topology(_: Request) -> Response:
        document = nml_document(provider.domain, provider.service.topology, endpoint.started)
        return Response(document, media_type=XML)

    async def discovery(_: Request) -> Response:
        document = discovery_document(provider.domain, endpoint.base_url, endpoint.started)
        return Response(document, media_type=XML)

    app.add_api_route("/NSI/services/CS2", cs2, methods=["POST"], include_in_schema=False)
    app.add_api_route(topology_path(provider.domain), topology, include_in_schema=False)
    app.add_api_route("/NSI/discovery.xml", discovery, include_in_schema=False)


def _answer(endpoint: NsiEndpoint, body: bytes, certificate: str | None = None) -> Response:
    provider = endpoint.provider
    try:
        provider.admit_sender(certificate)
        request = decode_request(body)
        provider.admit(request, certificate)
        answer = _dispatch(provider, request)
    except NsiError as exc:
        return Response(fault(provider.nsa, exc), status_code=500, media_type=XML)
    except Exception as exc:  # a bug must still answer in SOAP, and be logged
        log.exception("NSI request failed")
        error = NsiError(INTERNAL_ERROR, "", f"internal error: {type(exc).__name__}")
        return Response(fault(provider.nsa, error), status_code=500, media_type=XML)
    sends = answer.sends
    task = BackgroundTask(_deliver, endpoint.courier, sends) if sends else None
    return Response(_reply(request.header, answer), media_type=XML, background=task)


def _dispatch(provider: NsiProvider, request: NsiRequest) -> Answer:
    if isinstance(request, GenericRequest):
        return provider.generic(request)
    if isinstance(request, QueryRequest):
        return provider.query(request)
    return provider.reserve(request)


def _reply(header: Header, answer: Answer) -> bytes:
    reply_header = Header(
        header.correlation_id,
        header.requester_nsa,
        header.provider_nsa,
        None,
        "application/vnd.ogf.nsi.cs.v2.provider+soap",
    )
    if isinstance(answer.reply, SummaryConfirmed):
        return encode(reply_header, answer.reply)[1]
    if isinstance(answer.reply, str):
        return reserve_response(reply_header, answer.reply)
    return acknowledgment(reply_header)


def _deliver(courier: Courier, sends: tuple[Outgoing, ...]) -> None:
    for outgoing in sends:
        courier.send(outgoing)
