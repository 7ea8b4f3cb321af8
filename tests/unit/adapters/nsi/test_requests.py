"""The requester's side of the codec, read back by the provider's side (and the other way)."""

from __future__ import annotations

import pytest

from braid.adapters.nsi.replies import encode, reserve_response
from braid.adapters.nsi.requests import (
    decode_answer,
    generic_request,
    query_request,
    reserve_request,
)
from braid.adapters.nsi.soap import decode_request, fault
from braid.app.nsi.messages import (
    Criteria,
    GenericRequest,
    Header,
    QueryRequest,
    ReserveRequest,
    Summary,
    SummaryConfirmed,
)
from braid.app.nsi.ports import ProviderError
from braid.core.nsi.connection import ConnectionStates
from braid.core.nsi.errors import STP_UNAVAILABLE, NsiError
from braid.core.nsi.states import LifecycleState, ProvisionState, ReservationState
from braid.testing.nsi_requests import XXE

NET = "urn:ogf:network:peer.test:topology"
HEADER = Header("urn:uuid:1", "urn:ogf:network:braid:nsa", "urn:ogf:network:peer.test:nsa")
CRITERIA = Criteria(
    1, 1_900_000_000, 1_900_003_600, 100, f"{NET}:p1?vlan=1780-1781", f"{NET}:p3?vlan=1785"
)


def test_braid_s_requests_read_as_a_provider_reads_them() -> None:
    action, body = reserve_request(HEADER, "urn:uuid:2", "braid tx", CRITERIA)
    assert action.endswith('/reserve"')
    reserve = decode_request(body)
    assert isinstance(reserve, ReserveRequest)
    assert reserve.criteria == CRITERIA and reserve.global_reservation_id == "urn:uuid:2"
    assert reserve.header.reply_to is None  # outcomes are queried, nothing is sent back
    _, body = generic_request(HEADER, "reserveCommit", "c1")
    assert decode_request(body) == GenericRequest(HEADER, "reserveCommit", "c1")
    _, body = query_request(HEADER, ["c1", "c2"])
    assert decode_request(body) == QueryRequest(HEADER, "querySummarySync", ("c1", "c2"))


def test_a_provider_s_answers_read_back() -> None:
    assert decode_answer(reserve_response(HEADER, "c9")) == "c9"
    held = ConnectionStates(ReservationState.HELD, ProvisionState.RELEASED, LifecycleState.CREATED)
    summary = Summary("c9", "urn:uuid:2", "d", CRITERIA, HEADER.requester_nsa, held, False, 4)
    _, body = encode(HEADER, SummaryConfirmed("querySummarySyncConfirmed", (summary,)))
    assert decode_answer(body) == [summary]


def test_a_fault_is_a_refusal_with_its_error_id_and_junk_is_not_an_answer() -> None:
    body = fault(HEADER.provider_nsa, NsiError(STP_UNAVAILABLE, "sourceSTP", "VLAN in use"))
    with pytest.raises(ProviderError) as refused:
        decode_answer(body)
    assert refused.value.reached and refused.value.error_id == "00704"
    assert "VLAN in use" in refused.value.text
    for junk in (XXE, b"<not-soap/>", b"nonsense"):
        with pytest.raises(ProviderError) as bad:
            decode_answer(junk)
        assert bad.value.reached and not bad.value.error_id
