"""The NSI provider behind the real FastAPI app, on a fake clock, with a courier that keeps
what it would send: for the NSI API tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fastapi.testclient import TestClient
from lxml import etree

from braid.adapters.api import create_app
from braid.adapters.api.nsi import NsiEndpoint
from braid.adapters.nsi.replies import encode
from braid.adapters.nsi.safe_xml import parse_xml
from braid.app.auth import create_token
from braid.app.nsi.memory import MemoryConnections
from braid.app.nsi.messages import Outgoing
from braid.app.nsi.provider import NsiProvider
from braid.app.nsi.requesters import Requesters
from braid.app.ports import Filters
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings
from braid.testing.nsi_requests import request
from tests.api.harness import NOW, Clock

DOMAIN = "braid.test"
TOPOLOGY: dict[str, Any] = {
    "nodes": [{"id": "p1"}, {"id": "p2"}, {"id": "p3"}],
    "links": [
        {"id": "p1-p2", "a": "p1", "b": "p2", "capacity": "1G", "vlans": "1780-1789"},
        {"id": "p2-p3", "a": "p2", "b": "p3", "capacity": "1G", "vlans": "1780-1789"},
    ],
}
NS = {
    "soap": "http://schemas.xmlsoap.org/soap/envelope/",
    "ctypes": "http://schemas.ogf.org/nsi/2013/12/connection/types",
    "ftypes": "http://schemas.ogf.org/nsi/2013/12/framework/types",
}


@dataclass
class KeptCourier:
    """A courier that encodes every message as it would go out, and keeps it."""

    sent: list[tuple[str, etree._Element]] = field(default_factory=list)

    def send(self, outgoing: Outgoing) -> None:
        action, body = encode(outgoing.header, outgoing.message)
        self.sent.append((action.strip('"').rsplit("/", 1)[1], parse_xml(body)))

    def names(self) -> list[str]:
        return [name for name, _ in self.sent]


class WithCertificate:
    """The app as uvicorn serves it with client certificates: each request's scope names the
    subject of the client's verified certificate (`certificate`), or none when it is None."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.certificate: str | None = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.certificate is not None:
            scope = {**scope, "extensions": {"tls": {"client_subject": self.certificate}}}
        await self.app(scope, receive, send)


@dataclass
class Nsi:
    client: TestClient
    service: ReservationService
    provider: NsiProvider
    courier: KeptCourier
    clock: Clock
    operator: dict[str, str]
    tls: WithCertificate | None = None

    def post(self, operation: str, **values: Any) -> etree._Element:
        """POST a request built from `request(...)`; the answer's SOAP body."""
        answer = self.client.post("/NSI/services/CS2", content=request(operation, **values))
        return parse_xml(answer.content).find("soap:Body", NS)  # type: ignore[return-value]

    def booked(self) -> list[Any]:
        return list(self.service.books.store.find(Filters()))


def build(requesters: Requesters | None = None) -> Nsi:
    """`requesters`: the provider's allow-list (None: any requester at its word, --insecure);
    set `tls.certificate` to send the requests with a client certificate."""
    repo = MemoryRepository()
    clock = Clock()
    service = ReservationService(repo, clock=clock, hold_seconds=600)
    service.start(TOPOLOGY)
    courier = KeptCourier()
    provider = NsiProvider(service, MemoryConnections(), DOMAIN, requesters)
    endpoint = NsiEndpoint(provider, courier, "http://testserver", NOW)
    tls = WithCertificate(create_app(service, Settings(), nsi=endpoint))
    operator = {"Authorization": f"Bearer {create_token(repo, 'olga', 'operator', NOW)}"}
    return Nsi(TestClient(tls), service, provider, courier, clock, operator, tls)


def text(element: etree._Element, path: str) -> str:
    found = element.find(path, NS)
    assert found is not None and found.text is not None, f"no {path}"
    return found.text
