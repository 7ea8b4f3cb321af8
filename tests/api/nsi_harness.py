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
from braid.app.memory_store import MemoryRepository
from braid.app.nsi.memory import MemoryConnections
from braid.app.nsi.messages import Outgoing
from braid.app.nsi.provider import NsiProvider
from braid.app.ports import Filters
from braid.app.service import ReservationService
from braid.app.settings import Settings
from tests.api.harness import NOW, Clock

DOMAIN = "braid.test"
NSA = f"urn:ogf:network:{DOMAIN}:nsa"
REQUESTER = "urn:ogf:network:requester.test:nsa"
REPLY_TO = "http://127.0.0.1:1/NSI/services/RequesterService2"
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


@dataclass
class Nsi:
    client: TestClient
    service: ReservationService
    provider: NsiProvider
    courier: KeptCourier
    clock: Clock
    operator: dict[str, str]

    def post(self, operation: str, **values: Any) -> etree._Element:
        """POST a request built from `request(...)`; the answer's SOAP body."""
        answer = self.client.post("/NSI/services/CS2", content=request(operation, **values))
        return parse_xml(answer.content).find("soap:Body", NS)  # type: ignore[return-value]

    def booked(self) -> list[Any]:
        return list(self.service.repo.find(Filters()))


def build() -> Nsi:
    repo = MemoryRepository()
    clock = Clock()
    service = ReservationService(repo, clock=clock, hold_seconds=600)
    service.start(TOPOLOGY)
    courier = KeptCourier()
    provider = NsiProvider(service, MemoryConnections(), DOMAIN)
    endpoint = NsiEndpoint(provider, courier, "http://testserver", NOW)
    app = create_app(service, Settings(), nsi=endpoint)
    operator = {"Authorization": f"Bearer {create_token(repo, 'olga', 'operator', NOW)}"}
    return Nsi(TestClient(app), service, provider, courier, clock, operator)


def request(
    operation: str,
    *,
    connection_id: str | None = None,
    source: str = "p1?vlan=1780",
    dest: str = "p3?vlan=1781",
    capacity: int = 100,
    start: str = "2030-01-01T02:00:00Z",
    end: str = "2030-01-01T03:00:00Z",
    provider: str = NSA,
) -> bytes:
    """A request as a requester writes it (built with lxml, as braid writes its own)."""
    soap, ctypes = NS["soap"], NS["ctypes"]
    root = etree.Element(f"{{{soap}}}Envelope", nsmap={"soap": soap, "ctypes": ctypes})
    header = etree.SubElement(etree.SubElement(root, f"{{{soap}}}Header"), _h("nsiHeader"))
    for tag, text in (
        ("protocolVersion", "application/vnd.ogf.nsi.cs.v2.provider+soap"),
        ("correlationId", "urn:uuid:00000000-0000-0000-0000-000000000001"),
        ("requesterNSA", REQUESTER),
        ("providerNSA", provider),
        ("replyTo", REPLY_TO),
    ):
        etree.SubElement(header, tag).text = text
    body = etree.SubElement(etree.SubElement(root, f"{{{soap}}}Body"), f"{{{ctypes}}}{operation}")
    if connection_id is not None:
        etree.SubElement(body, "connectionId").text = connection_id
    if operation == "reserve":
        _criteria(body, source, dest, capacity, start, end)
    return bytes(etree.tostring(root))


def _h(tag: str) -> str:
    return f"{{http://schemas.ogf.org/nsi/2013/12/framework/headers}}{tag}"


def _criteria(
    body: etree._Element, source: str, dest: str, capacity: int, start: str, end: str
) -> None:
    criteria = etree.SubElement(body, "criteria", version="1")
    schedule = etree.SubElement(criteria, "schedule")
    etree.SubElement(schedule, "startTime").text = start
    etree.SubElement(schedule, "endTime").text = end
    etree.SubElement(criteria, "serviceType").text = "EVTS.A-GOLE"
    p2p = etree.SubElement(
        criteria, "{http://schemas.ogf.org/nsi/2013/12/services/point2point}p2ps"
    )
    for tag, text in (
        ("capacity", str(capacity)),
        ("directionality", "Bidirectional"),
        ("symmetricPath", "false"),
        ("sourceSTP", f"urn:ogf:network:{DOMAIN}:topology:{source}"),
        ("destSTP", f"urn:ogf:network:{DOMAIN}:topology:{dest}"),
    ):
        etree.SubElement(p2p, tag).text = text


def text(element: etree._Element, path: str) -> str:
    found = element.find(path, NS)
    assert found is not None and found.text is not None, f"no {path}"
    return found.text
