"""Modifying a volume across domains with real agent processes: make-before-break over
every old step, a refusal that leaves the old version standing, and a crash mid-modify
that the restart finishes (never split)."""

from __future__ import annotations

import time

import grpc
import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import G, states, wait_until
from tests.integration.negotiation.test_volume_grpc import volume

pytestmark = pytest.mark.slow

TB = 10**12
COMMITTED, RELEASED = {pb.HOLD_STATE_COMMITTED}, {pb.HOLD_STATE_RELEASED}


def booked_volume(cluster: LocalCluster, rid: str) -> tuple[int, pb.ReservationResp]:
    """1 TB through w1 (w2 is blind) beside 5G booked on w1 for [200, 400): three steps,
    10G, 5G, 10G, done at start + 900."""
    start = int(time.time()) + 60
    window = pb.Reservation(
        id=f"{rid}-w",
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        bandwidth_bps=5 * G,
        window=pb.Window(start=start + 200, end=start + 400),
        max_paths=1,
    )
    assert cluster.reserve(window).success
    reply = cluster.reserve(volume(rid, TB, start, start + 3600))
    assert reply.success, reply.reason
    assert reply.volume.completion == start + 900
    assert len(reply.volume.steps) == 3
    return start, reply


def modify(cluster: LocalCluster, rid: str, volume_bytes: int, deadline: int) -> pb.ReservationResp:
    query = pb.ModifyQuery(id=rid, volume_bytes=volume_bytes, deadline=deadline)
    reply: pb.ReservationResp = cluster.orchestrator().Modify(query, timeout=30)
    return reply


def step_states(cluster: LocalCluster, reply: pb.ReservationResp) -> set[int]:
    return {s for step in reply.volume.steps for s in states(cluster, step.transaction_id).values()}


def test_a_bigger_volume_counts_every_old_step_as_free_and_releases_them(
    cluster: LocalCluster,
) -> None:
    start, old = booked_volume(cluster, "v-grow")
    # 1.5 TB by start + 1300 fits only if every old step's 10G (or 5G) counts as free.
    new = modify(cluster, "v-grow", 3 * TB // 2, start + 1300)
    assert new.success and new.status == "committed", new.reason
    assert new.transaction_id != old.transaction_id
    assert new.volume.bytes == 3 * TB // 2 and new.volume.deadline == start + 1300
    assert new.volume.completion == start + 1300
    assert sum(s.rate_bps * (s.end - s.start) for s in new.volume.steps) == 12 * TB
    assert step_states(cluster, old) == RELEASED
    assert step_states(cluster, new) == COMMITTED
    assert cluster.orchestrator().Lookup(pb.ReservationQuery(id="v-grow")) == new


def test_a_modify_that_does_not_fit_leaves_the_old_standing_and_says_the_most(
    cluster: LocalCluster,
) -> None:
    start, old = booked_volume(cluster, "v-keep")
    with pytest.raises(grpc.RpcError) as refused:  # 3 TB by start + 1300: 1.5 TB at most
        modify(cluster, "v-keep", 3 * TB, start + 1300)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    details = refused.value.details() or ""
    assert "1500000000000 of 3000000000000 bytes" in details, details
    assert f"all of it by {start + 2500} at the earliest" in details, details
    assert cluster.orchestrator().Lookup(pb.ReservationQuery(id="v-keep")) == old
    assert step_states(cluster, old) == COMMITTED
    with pytest.raises(grpc.RpcError) as bad:  # a window's field on a volume
        cluster.orchestrator().Modify(pb.ModifyQuery(id="v-keep", bandwidth_bps=G))
    assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert (bad.value.details() or "").startswith("bandwidth_bps: ")
    with pytest.raises(grpc.RpcError) as early:  # a deadline before the volume's start
        modify(cluster, "v-keep", 0, start - 30)
    assert early.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert (early.value.details() or "").startswith("deadline: ")
    assert cluster.orchestrator().Lookup(pb.ReservationQuery(id="v-keep")) == old


@pytest.mark.parametrize("fault", ["exit-after-decide", "exit-before-release"])
def test_killed_mid_volume_modify_the_restart_finishes_it(
    cluster: LocalCluster, fault: str
) -> None:
    start, old = booked_volume(cluster, "v-crash")
    cluster.terminate("orchestrator")
    cluster.start_orchestrator(env={"BRAID_FAULT_ORCHESTRATOR": fault})
    with pytest.raises(grpc.RpcError):
        modify(cluster, "v-crash", 3 * TB // 2, start + 1300)
    assert cluster.wait_exit("orchestrator") == 70
    assert step_states(cluster, old) == COMMITTED  # no release has left yet
    cluster.start_orchestrator()  # every step's decision and every release are in the log
    new = cluster.orchestrator().Lookup(pb.ReservationQuery(id="v-crash"))
    assert new.success and new.transaction_id != old.transaction_id

    def finished() -> bool:
        return step_states(cluster, new) == COMMITTED and step_states(cluster, old) == RELEASED

    assert wait_until(finished), (step_states(cluster, new), step_states(cluster, old))
    assert new.volume.completion == start + 1300
