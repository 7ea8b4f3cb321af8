"""The NSI state machines against the transitions GFD.237 draws, event by event."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.nsi.connection import ConnectionStates, apply, data_plane_active
from braid.core.nsi.states import (
    LIFECYCLE,
    PROVISION,
    RESERVATION,
    Event,
    InvalidTransitionError,
    LifecycleState,
    ProvisionState,
    ReservationState,
    step,
)

# The spec's figures, written out here independently of the tables under test:
# (from, primitive, to) as the reservation, provision and lifecycle diagrams show.
SPEC_RSM = {
    ("ReserveStart", "reserve.rq", "ReserveChecking"),
    ("ReserveChecking", "reserve.cf", "ReserveHeld"),
    ("ReserveChecking", "reserve.fl", "ReserveFailed"),
    ("ReserveHeld", "reserveCommit.rq", "ReserveCommitting"),
    ("ReserveHeld", "reserveAbort.rq", "ReserveAborting"),
    ("ReserveHeld", "reserveTimeout.nt", "ReserveTimeout"),
    ("ReserveCommitting", "reserveCommit.cf", "ReserveStart"),
    ("ReserveCommitting", "reserveCommit.fl", "ReserveStart"),
    ("ReserveFailed", "reserveAbort.rq", "ReserveAborting"),
    ("ReserveTimeout", "reserveAbort.rq", "ReserveAborting"),
    ("ReserveTimeout", "reserveCommit.rq", "ReserveCommitting"),
    ("ReserveAborting", "reserveAbort.cf", "ReserveStart"),
}
SPEC_PSM = {
    ("Released", "provision.rq", "Provisioning"),
    ("Provisioning", "provision.cf", "Provisioned"),
    ("Provisioned", "release.rq", "Releasing"),
    ("Releasing", "release.cf", "Released"),
}
SPEC_LSM = {
    ("Created", "terminate.rq", "Terminating"),
    ("Created", "endTime.nt", "PassedEndTime"),
    ("Created", "forcedEnd.nt", "Failed"),
    ("Failed", "terminate.rq", "Terminating"),
    ("PassedEndTime", "terminate.rq", "Terminating"),
    ("Terminating", "terminate.cf", "Terminated"),
}

MACHINES = [
    (RESERVATION, ReservationState, SPEC_RSM),
    (PROVISION, ProvisionState, SPEC_PSM),
    (LIFECYCLE, LifecycleState, SPEC_LSM),
]


@pytest.mark.parametrize(("table", "kind", "spec"), MACHINES)
def test_each_table_is_exactly_the_spec_diagram(
    table: object, kind: type, spec: set[object]
) -> None:
    assert isinstance(table, dict)
    written = {(s.value, e.value, t.value) for (s, e), t in table.items()}
    assert written == spec


@given(
    st.sampled_from([0, 1, 2]),
    st.data(),
)
def test_step_follows_the_spec_or_refuses_and_changes_nothing(
    which: int, data: st.DataObject
) -> None:
    table, kind, spec = MACHINES[which]
    state = data.draw(st.sampled_from(list(kind)))
    event = data.draw(st.sampled_from(list(Event)))
    allowed = {(s, e): t for s, e, t in spec}
    if (state.value, event.value) in allowed:
        assert step(table, state, event).value == allowed[(state.value, event.value)]  # type: ignore[arg-type,type-var]
    else:
        with pytest.raises(InvalidTransitionError) as raised:
            step(table, state, event)  # type: ignore[arg-type,type-var]
        assert event.value in str(raised.value)
        assert state.value in str(raised.value)


@given(st.lists(st.sampled_from(list(Event)), max_size=40))
def test_any_sequence_of_events_keeps_the_connection_within_the_spec(events: list[Event]) -> None:
    states = ConnectionStates()
    for event in events:
        before = states
        try:
            states = apply(states, event)
        except InvalidTransitionError:
            continue  # refused: nothing changed (states are values)
        moved = _moved(before, states)
        assert len(moved) == 1, f"{event} moved {moved}"
        machine, old, new = moved[0]
        spec = {"reservation": SPEC_RSM, "provision": SPEC_PSM, "lifecycle": SPEC_LSM}[machine]
        if old is None:  # the provision machine appears at the first commit
            assert event is Event.RESERVE_COMMIT_CF and new == "Released"
            continue
        assert (old, event.value, new) in spec
        # A connection that is no longer Created takes lifecycle events only.
        assert before.lifecycle is LifecycleState.CREATED or machine == "lifecycle"
        # No provisioning before a commit.
        assert machine != "provision" or before.provision is not None


def _moved(a: ConnectionStates, b: ConnectionStates) -> list[tuple[str, str | None, str]]:
    moved: list[tuple[str, str | None, str]] = []
    if a.reservation != b.reservation:
        moved.append(("reservation", a.reservation.value, b.reservation.value))
    if a.provision != b.provision:
        assert b.provision is not None
        moved.append(("provision", a.provision.value if a.provision else None, b.provision.value))
    if a.lifecycle != b.lifecycle:
        moved.append(("lifecycle", a.lifecycle.value, b.lifecycle.value))
    return moved


def test_the_onsa_cycle_walks_the_machines() -> None:
    s = ConnectionStates()
    for event in (
        Event.RESERVE_RQ,
        Event.RESERVE_CF,
        Event.RESERVE_COMMIT_RQ,
        Event.RESERVE_COMMIT_CF,
        Event.PROVISION_RQ,
        Event.PROVISION_CF,
    ):
        s = apply(s, event)
    assert s == ConnectionStates(
        ReservationState.START, ProvisionState.PROVISIONED, LifecycleState.CREATED
    )
    assert data_plane_active(s, 10, 20, 15)
    assert not data_plane_active(s, 10, 20, 20)
    for event in (Event.RELEASE_RQ, Event.RELEASE_CF, Event.TERMINATE_RQ, Event.TERMINATE_CF):
        s = apply(s, event)
    assert s.lifecycle is LifecycleState.TERMINATED
    with pytest.raises(InvalidTransitionError):
        apply(s, Event.PROVISION_RQ)


def test_provision_before_any_commit_is_refused() -> None:
    held = apply(apply(ConnectionStates(), Event.RESERVE_RQ), Event.RESERVE_CF)
    with pytest.raises(InvalidTransitionError):
        apply(held, Event.PROVISION_RQ)
