"""NSI requesters are known by their client certificate: the NSA ids it may act as, the
replyTo endpoints braid may send their confirmations to, and only their own connections."""

from __future__ import annotations

import pytest

from braid.adapters.nsi.client_certificates import subject_of
from braid.app.nsi.requesters import Requesters, normal_dn, requesters_from_dict
from braid.core.errors import InputError
from braid.testing.nsi_requests import request
from tests.api.nsi_harness import NS, Nsi, build, text

ALICE_NSA = "urn:ogf:network:alice.test:nsa"
BOB_NSA = "urn:ogf:network:bob.test:nsa"
ALICE_CERT = "CN=alice-requester,O=Alice Lab"
BOB_CERT = "CN=bob-requester,O=Bob Lab"
ALICE_REPLY = "http://alice.test:9000/NSI/services/RequesterService2"
BOB_REPLY = "https://bob.test/NSI/services/RequesterService2"
REQUESTERS = {
    "requesters": [
        {"certificate": ALICE_CERT, "nsa": {ALICE_NSA: {"reply_to": [ALICE_REPLY]}}},
        {"certificate": "/O=Bob Lab/CN=bob-requester", "nsa": {BOB_NSA: {"reply_to": [BOB_REPLY]}}},
    ]
}


@pytest.fixture
def nsi() -> Nsi:
    return build(requesters_from_dict(REQUESTERS))


def _as(nsi: Nsi, certificate: str | None) -> Nsi:
    assert nsi.tls is not None
    nsi.tls.certificate = certificate
    return nsi


def _post(nsi: Nsi, operation: str, nsa: str, reply_to: str, **values: object) -> tuple[int, str]:
    payload = request(operation, requester=nsa, reply_to=reply_to, **values)  # type: ignore[arg-type]
    answer = nsi.client.post("/NSI/services/CS2", content=payload)
    return answer.status_code, answer.text


def _reserve_as_alice(nsi: Nsi) -> str:
    _as(nsi, ALICE_CERT)
    status, body = _post(nsi, "reserve", ALICE_NSA, ALICE_REPLY)
    assert status == 200, body
    answer = nsi.post("querySummarySync", requester=ALICE_NSA, reply_to=ALICE_REPLY)
    return text(answer, "ctypes:querySummarySyncConfirmed/reservation/connectionId")


def test_a_listed_certificate_acting_as_its_nsa_books_and_hears_at_its_endpoint(nsi: Nsi) -> None:
    cid = _reserve_as_alice(nsi)
    assert [r.id for r in nsi.booked()] == [cid]
    assert nsi.courier.names() == ["reserveConfirmed"]
    status, body = _post(nsi, "reserveCommit", ALICE_NSA, ALICE_REPLY, connection_id=cid)
    assert status == 200, body
    assert nsi.courier.names() == ["reserveConfirmed", "reserveCommitConfirmed"]


@pytest.mark.parametrize(
    ("certificate", "said"),
    [
        (None, "only over TLS with a client certificate"),
        ("CN=mallory,O=Elsewhere", "is not known"),
        (BOB_CERT, f"may not act as '{ALICE_NSA}'"),
    ],
)
def test_a_sender_that_may_not_act_as_the_requester_is_refused_before_anything(
    nsi: Nsi, certificate: str | None, said: str
) -> None:
    _as(nsi, certificate)
    for operation in ("reserve", "querySummary", "querySummarySync"):
        status, body = _post(nsi, operation, ALICE_NSA, ALICE_REPLY)
        assert status == 500 and "00302" in body and said in body, body
    assert nsi.booked() == [] and nsi.provider.connections.all() == []
    assert nsi.courier.sent == []


def test_claiming_another_nsa_s_id_cannot_end_its_connection(nsi: Nsi) -> None:
    cid = _reserve_as_alice(nsi)
    _as(nsi, BOB_CERT)  # Bob's certificate, naming Alice's NSA id: the probe's attack
    for operation in ("terminate", "reserveAbort", "reserveCommit", "provision"):
        status, body = _post(nsi, operation, ALICE_NSA, BOB_REPLY, connection_id=cid)
        assert status == 500 and "00302" in body, body
    # As itself, Bob does not even see Alice's connection.
    status, body = _post(nsi, "terminate", BOB_NSA, BOB_REPLY, connection_id=cid)
    assert status == 500 and "00203" in body, body
    answer = nsi.post("querySummarySync", requester=BOB_NSA, reply_to=BOB_REPLY)
    assert answer.find("ctypes:querySummarySyncConfirmed/reservation", NS) is None
    found = nsi.provider.connections.get(cid)
    assert found is not None and found.booked
    assert [r.state.value for r in nsi.booked()] == ["held"]
    assert nsi.courier.names() == ["reserveConfirmed"]  # nothing went to Bob, nor to Alice


@pytest.mark.parametrize(
    "reply_to",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://127.0.0.1:5432/",
        BOB_REPLY,  # another requester's endpoint
        ALICE_REPLY + "/../admin",
        "file:///etc/passwd",
    ],
)
def test_a_reply_to_not_registered_for_the_nsa_is_refused_and_never_contacted(
    nsi: Nsi, reply_to: str
) -> None:
    cid = _reserve_as_alice(nsi)
    for operation, values in (
        ("reserve", {}),
        ("querySummary", {}),
        ("terminate", {"connection_id": cid}),
    ):
        status, body = _post(nsi, operation, ALICE_NSA, reply_to, **values)
        assert status == 500 and "00302" in body and "replyTo" in body, body
    assert nsi.courier.names() == ["reserveConfirmed"]  # only the first, good, reserve's
    assert len(nsi.booked()) == 1 and len(nsi.provider.connections.all()) == 1


def test_a_synchronous_query_s_reply_to_is_never_used_so_not_checked(nsi: Nsi) -> None:
    _reserve_as_alice(nsi)
    status, body = _post(nsi, "querySummarySync", ALICE_NSA, "urn:braid:synchronous-query")
    assert status == 200, body
    assert nsi.courier.names() == ["reserveConfirmed"]


def test_distinguished_names_compare_in_any_spelling() -> None:
    assert normal_dn("CN=a, O=b") == normal_dn("/O=b/CN=a") == normal_dn("O=b,CN=a") == "CN=a,O=b"
    assert normal_dn("commonName=a,organizationName=b") == "CN=a,O=b"
    assert normal_dn(r"CN=a\, b") == "CN=a, b"
    with pytest.raises(ValueError, match="not a distinguished name"):
        normal_dn("just a name")
    peercert = {"subject": ((("organizationName", "Bob Lab"),), (("commonName", "bob-requester"),))}
    assert subject_of(peercert) == normal_dn(BOB_CERT)
    assert subject_of(None) is None and subject_of({}) is None


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"requester": []}, "nsi_requesters"),
        ({"requesters": [{"certificate": "nobody", "nsa": {ALICE_NSA: None}}]}, "certificate"),
        ({"requesters": [{"certificate": ALICE_CERT, "nsa": []}]}, "requesters[0].nsa"),
        (
            {"requesters": [{"certificate": ALICE_CERT, "nsa": {ALICE_NSA: {"reply_to": "x"}}}]},
            "reply_to",
        ),
        (
            {"requesters": [{"certificate": ALICE_CERT, "nsa": {ALICE_NSA: {"reply": []}}}]},
            ALICE_NSA,
        ),
    ],
)
def test_a_bad_requesters_file_is_refused_naming_the_entry(data: object, field: str) -> None:
    with pytest.raises(InputError) as refused:
        requesters_from_dict(data)
    assert field in str(refused.value)


def test_an_nsa_without_endpoints_may_only_ask_synchronously() -> None:
    listed = requesters_from_dict(
        {"requesters": [{"certificate": ALICE_CERT, "nsa": {ALICE_NSA: None}}]}
    )
    assert listed == Requesters(
        {normal_dn(ALICE_CERT): frozenset({ALICE_NSA})}, {ALICE_NSA: frozenset()}
    )


def test_a_stranger_s_xml_is_not_even_parsed(nsi: Nsi) -> None:
    _as(nsi, None)
    answer = nsi.client.post("/NSI/services/CS2", content=b"<not-xml")
    assert answer.status_code == 500 and "00302" in answer.text  # not 00100: never parsed
    _as(nsi, ALICE_CERT)
    answer = nsi.client.post("/NSI/services/CS2", content=b"<not-xml")
    assert answer.status_code == 500 and "00100" in answer.text
