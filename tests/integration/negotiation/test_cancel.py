"""Cancel across domains with real processes: every domain frees it, even across a crash."""

from __future__ import annotations

import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import (
    assert_ledgers_agree,
    reservation,
    states,
    wait_until,
)

pytestmark = pytest.mark.slow


def cancel(cluster: LocalCluster, rid: str) -> pb.ReservationResp:
    reply: pb.ReservationResp = cluster.orchestrator().Cancel(pb.CancelQuery(id=rid), timeout=10)
    return reply


def test_cancel_frees_every_domain_even_across_a_crash(cluster: LocalCluster) -> None:
    reply = cluster.reserve(reservation("r-cancel", 10, paths=1))  # all of w1's core
    assert reply.success, reply.reason
    cluster.kill("w1")
    answer = cancel(cluster, "r-cancel")
    assert answer.status == "cancelled" and not answer.success
    held = {h.domain: h.state for h in answer.holdings}
    assert held == {"site-a": "released", "site-b": "released", "w1": "releasing"}
    cluster.kill("orchestrator")  # a crash mid-cancel: w1 has not heard it
    cluster.start_agent("w1")
    cluster.start_orchestrator()  # the release is in the log: re-sent on start
    released = wait_until(
        lambda: set(states(cluster, reply.transaction_id).values()) == {pb.HOLD_STATE_RELEASED}
    )
    assert released, states(cluster, reply.transaction_id)
    again = cancel(cluster, "r-cancel")  # idempotent: the same answer, nothing sent twice
    assert again.status == "cancelled"
    assert {h.state for h in again.holdings} == {"released"}
    assert_ledgers_agree(cluster, [])
    refill = cluster.reserve(reservation("r-refill", 10, paths=1))  # the room is free again
    assert refill.success, refill.reason
    assert_ledgers_agree(cluster, [refill])


def test_cancel_of_an_unknown_or_failed_reservation(cluster: LocalCluster) -> None:
    import grpc

    with pytest.raises(grpc.RpcError) as caught:
        cancel(cluster, "r-nobody")
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    failed = cluster.reserve(reservation("r-big", 25, paths=1))
    assert not failed.success
    assert cancel(cluster, "r-big").status == "failed"  # nothing held, nothing to do
    assert_ledgers_agree(cluster, [])
