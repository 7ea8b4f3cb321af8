"""braid's NSI CS 2.0 provider over SOAP: the cycle, refusals, faults, timeouts, notifications."""

from __future__ import annotations

import pytest

from braid.app.nsi.sweep import sweep
from braid.core.planning.lifecycle import State
from braid.testing.nsi_requests import LAUGHS, XXE, request
from tests.api.nsi_harness import NS, Nsi, build, text


@pytest.fixture
def nsi() -> Nsi:
    return build()


def _reserve(nsi: Nsi, **values: object) -> str:
    body = nsi.post("reserve", **values)
    return text(body, "ctypes:reserveResponse/connectionId")


def _state(nsi: Nsi, connection_id: str) -> State:
    answer = nsi.client.get(f"/v1/reservations/{connection_id}", headers=nsi.operator)
    assert answer.status_code == 200, answer.text
    return State(answer.json()["state"])


def _summary(nsi: Nsi, connection_id: str) -> tuple[str, str | None, str]:
    body = nsi.post("querySummarySync", connection_id=connection_id)
    states = body.find("ctypes:querySummarySyncConfirmed/reservation/connectionStates", NS)
    assert states is not None
    provision = states.find("provisionState")
    return (
        text(states, "reservationState"),
        provision.text if provision is not None else None,
        text(states, "lifecycleState"),
    )


def test_the_onsa_cycle_books_confirms_and_cancels_in_braid(nsi: Nsi) -> None:
    cid = _reserve(nsi)
    assert _state(nsi, cid) is State.HELD  # the NSI hold is a braid hold, same id
    assert _summary(nsi, cid) == ("ReserveHeld", "Released", "Created")
    nsi.post("reserveCommit", connection_id=cid)
    assert _state(nsi, cid) is State.RESERVED
    assert _summary(nsi, cid) == ("ReserveStart", "Released", "Created")
    nsi.post("provision", connection_id=cid)
    assert _summary(nsi, cid) == ("ReserveStart", "Provisioned", "Created")
    nsi.post("release", connection_id=cid)
    assert _summary(nsi, cid) == ("ReserveStart", "Released", "Created")
    nsi.post("terminate", connection_id=cid)
    assert _summary(nsi, cid) == ("ReserveStart", "Released", "Terminated")
    assert _state(nsi, cid) is State.CANCELLED
    assert nsi.courier.names() == [
        "reserveConfirmed",
        "reserveCommitConfirmed",
        "provisionConfirmed",
        "releaseConfirmed",
        "terminateConfirmed",
    ]
    confirmed = nsi.courier.sent[0][1]
    stp = "ctypes:reserveConfirmed/criteria/{*}p2ps/sourceSTP"
    assert text(confirmed.find("soap:Body", NS), stp).endswith(":p1?vlan=1780")  # type: ignore[arg-type]


def test_abort_frees_the_hold(nsi: Nsi) -> None:
    cid = _reserve(nsi)
    nsi.post("reserveAbort", connection_id=cid)
    assert _state(nsi, cid) is State.CANCELLED
    assert _summary(nsi, cid) == ("ReserveStart", "Released", "Created")
    assert nsi.courier.names() == ["reserveConfirmed", "reserveAbortConfirmed"]


def test_a_request_that_does_not_fit_fails_with_the_reason_and_books_nothing(nsi: Nsi) -> None:
    cid = _reserve(nsi, capacity=5000)
    assert nsi.booked() == []
    assert nsi.courier.names() == ["reserveFailed"]
    failed = nsi.courier.sent[0][1].find("soap:Body/ctypes:reserveFailed", NS)
    assert failed is not None
    assert text(failed, "serviceException/errorId") == "00705"
    assert "5 Gbit/s" in text(failed, "serviceException/text")
    assert _summary(nsi, cid)[0] == "ReserveFailed"
    nsi.post("reserveAbort", connection_id=cid)
    assert _summary(nsi, cid)[0] == "ReserveStart"


@pytest.mark.parametrize(
    ("payload", "code", "says"),
    [
        (b"<soap:Envelope", "00100", "not well-formed"),
        (b"<a>not soap</a>", "00100", "SOAP"),
        (XXE, "00100", "document type"),
        (LAUGHS, "00100", "document type"),
        (request("reserve", source="p9?vlan=1780"), "00701", "sourceSTP"),
        (request("reserve", dest="p3?vlan=1800"), "00400", "destSTP"),
        (request("reserve", dest="p3?vlan=9999"), "00400", "destSTP"),
        (request("reserve", end="2030-01-01T02:00:00Z"), "00100", "endTime"),
        (request("reserve", provider="urn:ogf:network:other:nsa"), "00302", "providerNSA"),
        (request("reserveCommit", connection_id="r-nope"), "00203", "connectionId"),
        (request("queryNotification"), "00103", "queryNotification"),
    ],
)
def test_bad_input_is_a_soap_fault_with_nsi_s_error_code_and_books_nothing(
    nsi: Nsi, payload: bytes, code: str, says: str
) -> None:
    answer = nsi.client.post("/NSI/services/CS2", content=payload)
    assert answer.status_code == 500
    from braid.adapters.nsi.safe_xml import parse_xml

    detail = parse_xml(answer.content).find(
        "soap:Body/soap:Fault/detail/ftypes:serviceException", NS
    )
    assert detail is not None
    assert text(detail, "errorId") == code
    assert says in text(detail, "text")
    assert nsi.booked() == []
    assert nsi.provider.all() == []
    assert nsi.courier.sent == []


def test_a_taken_vlan_at_a_port_is_refused_for_an_overlapping_window(nsi: Nsi) -> None:
    _reserve(nsi, source="p1?vlan=1780")
    answer = nsi.client.post("/NSI/services/CS2", content=request("reserve", source="p1?vlan=1780"))
    assert answer.status_code == 500 and b"00704" in answer.content
    later = _reserve(nsi, start="2030-01-01T03:00:00Z", end="2030-01-01T04:00:00Z")
    assert _state(nsi, later) is State.HELD  # the same VLAN after the first window is free
    ranged = _reserve(nsi, source="p1?vlan=1780-1789", dest="p3?vlan=1785")
    stp = nsi.provider.connections.get(ranged)
    assert stp is not None and stp.vlans[0] == 1781


def test_a_transition_the_spec_forbids_is_a_fault(nsi: Nsi) -> None:
    cid = _reserve(nsi)
    answer = nsi.client.post("/NSI/services/CS2", content=request("provision", connection_id=cid))
    assert answer.status_code == 500 and b"00201" in answer.content
    assert _summary(nsi, cid) == ("ReserveHeld", "Released", "Created")


def test_an_uncommitted_hold_times_out_and_cannot_be_committed_after(nsi: Nsi) -> None:
    cid = _reserve(nsi)
    nsi.clock.advance(601)
    assert _state(nsi, cid) is State.EXPIRED
    for outgoing in sweep(nsi.provider):
        nsi.courier.send(outgoing)
    assert nsi.courier.names() == ["reserveConfirmed", "reserveTimeout"]
    assert _summary(nsi, cid)[0] == "ReserveTimeout"
    nsi.post("reserveCommit", connection_id=cid)
    assert nsi.courier.names()[-1] == "reserveCommitFailed"
    nsi.post("terminate", connection_id=cid)
    assert _summary(nsi, cid)[2] == "Terminated"


def test_the_data_plane_goes_active_in_the_window_when_provisioned(nsi: Nsi) -> None:
    cid = _reserve(nsi, start="2030-01-01T00:10:00Z", end="2030-01-01T00:20:00Z")
    nsi.post("reserveCommit", connection_id=cid)
    nsi.post("provision", connection_id=cid)
    nsi.clock.advance(600)
    for outgoing in sweep(nsi.provider):
        nsi.courier.send(outgoing)
    nsi.clock.advance(600)
    for outgoing in sweep(nsi.provider):
        nsi.courier.send(outgoing)
    changes = [x for name, x in nsi.courier.sent if name == "dataPlaneStateChange"]
    active = [
        text(x, "soap:Body/ctypes:dataPlaneStateChange/dataPlaneStatus/active") for x in changes
    ]
    assert active == ["true", "false"]
    assert _summary(nsi, cid) == ("ReserveStart", "Provisioned", "PassedEndTime")


def test_a_reservation_cancelled_in_braid_ends_the_connection_with_an_error_event(
    nsi: Nsi,
) -> None:
    cid = _reserve(nsi)
    nsi.post("reserveCommit", connection_id=cid)
    assert nsi.client.delete(f"/v1/reservations/{cid}", headers=nsi.operator).status_code == 200
    for outgoing in sweep(nsi.provider):
        nsi.courier.send(outgoing)
    assert nsi.courier.names()[-1] == "errorEvent"
    assert _summary(nsi, cid)[2] == "Failed"


def test_an_asynchronous_query_answers_at_the_reply_address(nsi: Nsi) -> None:
    cid = _reserve(nsi)
    body = nsi.post("querySummary", connection_id=cid)
    assert body.find("ctypes:acknowledgment", NS) is not None
    assert nsi.courier.names()[-1] == "querySummaryConfirmed"
    recursive = nsi.post("querySummarySync")  # no ids: all of the requester's connections
    assert len(recursive.findall("ctypes:querySummarySyncConfirmed/reservation", NS)) == 1


def test_the_topology_and_discovery_documents_describe_braid_s_ports(nsi: Nsi) -> None:
    nml = nsi.client.get("/NSI/braid.test:topology.nml.xml")
    assert nml.status_code == 200
    assert b"urn:ogf:network:braid.test:topology:p2" in nml.content
    assert b"1780-1789" in nml.content
    discovery = nsi.client.get("/NSI/discovery.xml")
    assert b"http://testserver/NSI/services/CS2" in discovery.content
