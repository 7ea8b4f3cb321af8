"""`SoapProvider`: braid's requests to NSI providers over SOAP 1.1/HTTP (the `NsiProvider` port).

Every request waits for the provider's synchronous answer only; outcomes
are read with querySummarySync (see `braid.app.nsi.participant`), so braid
gives no replyTo with its requests and the provider sends nothing back.
OpenNSA refuses even a synchronous query without a replyTo, though it never
uses it there: queries name a URN nobody can post to.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Final

import httpx

from braid.adapters.nsi.requests import (
    Answer,
    decode_answer,
    generic_request,
    query_request,
    reserve_request,
)
from braid.app.nsi.messages import Criteria, Header, Summary
from braid.app.nsi.ports import ProviderError
from braid.core.nsi.peer import NsiPeer

__all__ = ["SoapProvider"]

_NO_REPLY: Final = "urn:braid:synchronous-query"
_CONTENT: Final = "text/xml; charset=utf-8"


class SoapProvider:
    def __init__(self, timeout: float = 10.0) -> None:
        self._client = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._client.close()

    def reserve(self, peer: NsiPeer, global_id: str, criteria: Criteria) -> str:
        description = f"braid interdomain reservation {global_id}"
        action, body = reserve_request(_header(peer), global_id, description, criteria)
        answer = self._post(peer, action, body)
        if not isinstance(answer, str):
            raise ProviderError("reserve was not answered with a connection id", reached=True)
        return answer

    def request(self, peer: NsiPeer, operation: str, connection_id: str) -> None:
        action, body = generic_request(_header(peer), operation, connection_id)
        self._post(peer, action, body)

    def summaries(self, peer: NsiPeer, connection_ids: Sequence[str] = ()) -> list[Summary]:
        action, body = query_request(_header(peer, _NO_REPLY), connection_ids)
        answer = self._post(peer, action, body)
        if not isinstance(answer, list):
            raise ProviderError("querySummarySync was not answered with reservations", reached=True)
        return answer

    def _post(self, peer: NsiPeer, action: str, body: bytes) -> Answer:
        headers = {"Content-Type": _CONTENT, "SOAPAction": action}
        try:
            reply = self._client.post(peer.provider, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise ProviderError(f"{peer.provider}: {exc}", reached=False) from exc
        if reply.status_code >= 500 and b"Fault" not in reply.content:
            raise ProviderError(f"{peer.provider} answered {reply.status_code}", reached=False)
        return decode_answer(reply.content)


def _header(peer: NsiPeer, reply_to: str | None = None) -> Header:
    return Header(f"urn:uuid:{uuid.uuid4()}", peer.requester, peer.nsa, reply_to)
