"""braid's NSI requester as a two-phase-commit participant, against an in-memory provider
that moves through NSI's states as a real one does (each step seen by the next query)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

import pytest

from braid.app.agent.messages import OffersCall, PrepCall
from braid.app.negotiation.ports import CallFailedError
from braid.app.nsi.messages import Criteria, Summary
from braid.app.nsi.participant import NsiParticipants, global_id
from braid.app.nsi.ports import ProviderError
from braid.core.negotiation.holds import SegmentAsk
from braid.core.nsi.connection import ConnectionStates
from braid.core.nsi.peer import BorderEnd, NsiPeer
from braid.core.nsi.states import LifecycleState as L
from braid.core.nsi.states import ProvisionState as P
from braid.core.nsi.states import ReservationState as R

NET = "urn:ogf:network:peer.test:topology"
PEER = NsiPeer(
    "http://peer/NSI", "urn:ogf:network:peer.test:nsa", {"n1": f"{NET}:p1", "n3": f"{NET}:p3"}
)
ENDS = (
    BorderEnd("a-n", "a-edge", "n1", 10**9, 1780, 1781),
    BorderEnd("n-b", "b-edge", "n3", 10**9, 1785, 1785),
)
SEGMENT = (SegmentAsk("a-edge", "b-edge", 10**8, 0),)
WINDOW = (1_900_000_000, 1_900_003_600)
# What each state becomes at the provider's next step.
NEXT = {R.CHECKING: R.HELD, R.ABORTING: R.START}


@dataclass
class _Connection:
    summary: Summary
    fail: bool = False


class FakeProvider:
    """Picks the lowest VLAN of each STP's range; `refuse` makes reserves end ReserveFailed."""

    def __init__(self) -> None:
        self.connections: dict[str, _Connection] = {}
        self.refuse = False
        self.down = False
        self.sent: list[tuple[str, str]] = []
        self._ids = itertools.count(1)

    def reserve(self, peer: NsiPeer, global_id: str, criteria: Criteria) -> str:
        self._reach()
        cid = f"c{next(self._ids)}"
        chosen = replace(
            criteria, source_stp=_lowest(criteria.source_stp), dest_stp=_lowest(criteria.dest_stp)
        )
        summary = Summary(
            cid, global_id, None, chosen, peer.requester, _states(R.CHECKING), False, 0
        )
        self.connections[cid] = _Connection(summary, self.refuse)
        return cid

    def request(self, peer: NsiPeer, operation: str, connection_id: str) -> None:
        self._reach()
        self.sent.append((operation, connection_id))
        known = self.connections.get(connection_id)
        if known is None:
            raise ProviderError("no such connection", reached=True, error_id="00203")
        states = known.summary.states
        moves = {
            ("reserveCommit", R.HELD): _states(R.COMMITTING),
            ("reserveAbort", R.HELD): _states(R.ABORTING),
        }
        if operation == "terminate":
            after = replace(states, lifecycle=L.TERMINATING)
        elif operation == "provision" and states.provision is P.RELEASED:
            after = replace(states, provision=P.PROVISIONING)
        elif (operation, states.reservation) in moves:
            after = moves[(operation, states.reservation)]
        else:
            raise ProviderError("invalid transition", reached=True, error_id="00201")
        known.summary = replace(known.summary, states=after)

    def summaries(self, peer: NsiPeer, connection_ids: Sequence[str] = ()) -> list[Summary]:
        self._reach()
        for known in self.connections.values():  # the provider gets on with its work
            states = known.summary.states
            if states.reservation is R.CHECKING and known.fail:
                states = _states(R.FAILED)
            elif states.reservation is R.COMMITTING:
                states = replace(states, reservation=R.START, provision=P.RELEASED)
            elif states.reservation in NEXT:
                states = replace(states, reservation=NEXT[states.reservation])
            if states.provision is P.PROVISIONING:
                states = replace(states, provision=P.PROVISIONED)
            if states.lifecycle is L.TERMINATING:
                states = replace(states, lifecycle=L.TERMINATED)
            known.summary = replace(known.summary, states=states)
        wanted = connection_ids or list(self.connections)
        return [self.connections[c].summary for c in wanted if c in self.connections]

    def state(self, cid: str) -> tuple[R, L]:
        states = self.connections[cid].summary.states
        return states.reservation, states.lifecycle

    def _reach(self) -> None:
        if self.down:
            raise ProviderError("connection refused", reached=False)


class MemoryBook:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list[str]] = {}

    def add(self, transaction: str, domain: str, connection_id: str) -> None:
        known = self.rows.setdefault((transaction, domain), [])
        if connection_id not in known:
            known.append(connection_id)

    def connections(self, transaction: str, domain: str) -> list[str]:
        return list(self.rows.get((transaction, domain), []))


def _states(reservation: R) -> ConnectionStates:
    return ConnectionStates(reservation, None, L.CREATED)


def _lowest(stp: str) -> str:
    base, _, vlans = stp.partition("?vlan=")
    return f"{base}?vlan={vlans.split('-')[0]}"


def _participants(provider: FakeProvider, book: MemoryBook | None = None) -> NsiParticipants:
    return NsiParticipants(
        {"onsa": PEER}, {"onsa": ENDS}, provider, book or MemoryBook(), sleep=lambda _: None
    )


def test_held_is_yes_with_the_vlans_chosen_then_commit_then_release_terminates() -> None:
    provider = FakeProvider()
    nsi = _participants(provider)
    vote = nsi.prepare("onsa", PrepCall("tx1", "token", WINDOW, SEGMENT, 30, False)).result()
    assert vote.yes and vote.vlans == (("a-n", 1780, 0), ("n-b", 1785, 0))
    (cid,) = provider.connections
    asked = provider.connections[cid].summary
    assert asked.global_reservation_id == global_id("tx1", "onsa")
    assert asked.criteria.capacity == 100
    assert nsi.commit("onsa", "tx1", "token").result() == "HOLD_STATE_COMMITTED"
    assert provider.state(cid) == (R.START, L.CREATED)
    assert provider.connections[cid].summary.states.provision is P.PROVISIONED
    assert nsi.commit("onsa", "tx1", "token").result() == "HOLD_STATE_COMMITTED"  # a re-send
    assert nsi.release("onsa", "tx1", "token").result() == "HOLD_STATE_RELEASED"
    assert provider.state(cid)[1] is L.TERMINATED
    assert [op for op, _ in provider.sent] == ["reserveCommit", "provision", "terminate"]


def test_a_reserve_the_provider_fails_is_no_and_leaves_nothing() -> None:
    provider = FakeProvider()
    provider.refuse = True
    vote = (
        _participants(provider)
        .prepare("onsa", PrepCall("tx2", "t", WINDOW, SEGMENT, 30, False))
        .result()
    )
    assert not vote.yes and "ReserveFailed" in vote.reason and PEER.nsa in vote.reason
    assert [s for s, _ in map(provider.state, provider.connections)] == [R.FAILED]
    assert {lifecycle for _, lifecycle in map(provider.state, provider.connections)} == {
        L.TERMINATED
    }


def test_abort_after_a_restart_that_lost_the_id_finds_it_by_global_id() -> None:
    provider = FakeProvider()
    assert (
        _participants(provider)
        .prepare("onsa", PrepCall("tx3", "t", WINDOW, SEGMENT, 30, False))
        .result()
        .yes
    )
    restarted = _participants(provider, MemoryBook())  # the id never reached the book
    assert restarted.abort("onsa", "tx3", "t").result() == "HOLD_STATE_ABORTED"
    (cid,) = provider.connections
    assert provider.state(cid) == (R.START, L.TERMINATED)
    assert [op for op, _ in provider.sent] == ["reserveAbort", "terminate"]
    assert restarted.abort("onsa", "never-reserved", "t").result() == "HOLD_STATE_ABORTED"


def test_an_abort_that_overtakes_the_reserve_still_ends_its_connection() -> None:
    provider = FakeProvider()
    book = MemoryBook()
    nsi = _participants(provider, book)
    assert nsi.abort("onsa", "tx4", "t").result() == "HOLD_STATE_ABORTED"  # nothing there yet
    vote = nsi.prepare("onsa", PrepCall("tx4", "t", WINDOW, SEGMENT, 30, False)).result()
    assert not vote.yes
    assert [provider.state(c)[1] for c in provider.connections] == [L.TERMINATED]


def test_commits_that_cannot_be_honoured_or_reached() -> None:
    provider = FakeProvider()
    nsi = _participants(provider)
    with pytest.raises(CallFailedError) as unknown:
        nsi.commit("onsa", "tx-none", "t").result()
    assert unknown.value.error == "ERROR_CODE_UNKNOWN_TRANSACTION"
    assert nsi.prepare("onsa", PrepCall("tx5", "t", WINDOW, SEGMENT, 30, False)).result().yes
    (cid,) = provider.connections
    known = provider.connections[cid]
    known.summary = replace(known.summary, states=_states(R.TIMEOUT))  # the provider gave up
    with pytest.raises(CallFailedError) as conflict:
        nsi.commit("onsa", "tx5", "t").result()
    assert conflict.value.error == "ERROR_CODE_CONFLICT"
    provider.down = True
    with pytest.raises(CallFailedError) as down:
        nsi.release("onsa", "tx5", "t").result()
    assert down.value.unreachable
    with pytest.raises(CallFailedError) as blind:
        nsi.offers("onsa", OffersCall("tx6", "t", WINDOW, (("a-edge", "b-edge"),), False)).result()
    assert blind.value.error == "ERROR_CODE_BLIND_DOMAIN"


def test_a_connection_the_provider_forgot_settles_an_abort_and_refuses_a_commit() -> None:
    provider = FakeProvider()
    nsi = _participants(provider)
    assert nsi.prepare("onsa", PrepCall("tx7", "t", WINDOW, SEGMENT, 30, False)).result().yes
    provider.connections.clear()  # the provider lost its database
    for call in (nsi.commit, nsi.abort):
        with pytest.raises(CallFailedError) as forgotten:
            call("onsa", "tx7", "t").result()
        assert forgotten.value.error == "ERROR_CODE_UNKNOWN_TRANSACTION"  # settled, not retried
