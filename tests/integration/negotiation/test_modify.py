"""Modify across domains with real processes: make-before-break, and never split.

The orchestrator and four agents run as processes over gRPC. After each
scenario every agent's ledger is read (Status): the version that stands is
committed in each of its domains, the other is released or aborted, nothing
is left held and no link direction is above its capacity.
"""

from __future__ import annotations

import grpc
import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import (
    G,
    assert_ledgers_agree,
    reservation,
    states,
    wait_until,
)

pytestmark = pytest.mark.slow

FREED = {pb.HOLD_STATE_RELEASED}


def modify(cluster: LocalCluster, rid: str, gbps: float, max_paths: int = 0) -> pb.ReservationResp:
    query = pb.ModifyQuery(id=rid, bandwidth_bps=int(gbps * G), max_paths=max_paths)
    reply: pb.ReservationResp = cluster.orchestrator().Modify(query, timeout=30)
    return reply


def lookup(cluster: LocalCluster, rid: str) -> pb.ReservationResp:
    reply: pb.ReservationResp = cluster.orchestrator().Lookup(pb.ReservationQuery(id=rid))
    return reply


def domains_of(reply: pb.ReservationResp) -> set[str]:
    return {s.domain for p in reply.paths for s in p.segments}


def test_a_modify_commits_everywhere_and_releases_the_old_everywhere(
    cluster: LocalCluster,
) -> None:
    first = cluster.reserve(reservation("r-mod", 4, paths=1))  # over w1 only
    assert first.success, first.reason
    new = modify(cluster, "r-mod", 12, max_paths=2)  # more than w1 carries: both WANs
    assert new.success and new.status == "committed"
    assert new.transaction_id != first.transaction_id
    assert sum(p.bandwidth_bps for p in new.paths) == 12 * G
    assert domains_of(new) == {"site-a", "w1", "w2", "site-b"}
    assert set(states(cluster, first.transaction_id).values()) == FREED
    assert states(cluster, new.transaction_id) == dict.fromkeys(
        domains_of(new), pb.HOLD_STATE_COMMITTED
    )
    assert lookup(cluster, "r-mod") == new
    assert_ledgers_agree(cluster, [new])  # the old booking is in no ledger any more


def test_a_modify_that_grows_on_a_nearly_full_link_counts_the_old_version_as_free(
    cluster: LocalCluster,
) -> None:
    """8G to 9G on one path: each domain places the new version as if the old were gone
    and books only the difference while both stand (8G + 9G would not fit a 10G core)."""
    first = cluster.reserve(reservation("r-grow", 8, paths=1))
    assert first.success, first.reason
    new = modify(cluster, "r-grow", 9)  # one path: the lowest-latency WAN, w1, again
    assert new.success and new.status == "committed", new.reason
    assert domains_of(new) == domains_of(first)  # the same WAN, now 9G of its 10G
    assert set(states(cluster, first.transaction_id).values()) == FREED
    assert set(states(cluster, new.transaction_id).values()) == {pb.HOLD_STATE_COMMITTED}
    assert_ledgers_agree(cluster, [new])


def test_a_modify_that_does_not_fit_leaves_the_old_untouched(cluster: LocalCluster) -> None:
    first = cluster.reserve(reservation("r-keep", 8, paths=1))
    assert first.success, first.reason
    before = lookup(cluster, "r-keep")
    with pytest.raises(grpc.RpcError) as caught:  # more than any one WAN's 10G core
        modify(cluster, "r-keep", 11)
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not modified" in str(caught.value.details())
    assert lookup(cluster, "r-keep") == before
    assert set(states(cluster, first.transaction_id).values()) == {pb.HOLD_STATE_COMMITTED}
    assert_ledgers_agree(cluster, [first])  # the refused version's holds were aborted
    with pytest.raises(grpc.RpcError) as unknown:
        modify(cluster, "r-nobody", 1)
    assert unknown.value.code() == grpc.StatusCode.NOT_FOUND
    backwards = pb.ModifyQuery(id="r-keep", window=pb.Window(end=1))
    with pytest.raises(grpc.RpcError) as bad:  # an end before the reservation's start
        cluster.orchestrator().Modify(backwards, timeout=10)
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "window.end" in str(bad.value.details())
    assert lookup(cluster, "r-keep") == before


@pytest.mark.parametrize("fault", ["exit-after-decide", "exit-before-release"])
def test_killed_mid_modify_the_restart_finishes_it(cluster: LocalCluster, fault: str) -> None:
    first = cluster.reserve(reservation("r-crash", 4, paths=1))
    assert first.success, first.reason
    cluster.terminate("orchestrator")
    cluster.start_orchestrator(env={"BRAID_FAULT_ORCHESTRATOR": fault})
    with pytest.raises(grpc.RpcError):
        modify(cluster, "r-crash", 6)  # decided (and, before release, committed): then killed
    assert cluster.wait_exit("orchestrator") == 70
    mid = {t.transaction_id for r in cluster.reports().values() for t in r.transactions}
    (new_tx,) = mid - {first.transaction_id}
    assert set(states(cluster, first.transaction_id).values()) == {pb.HOLD_STATE_COMMITTED}
    cluster.start_orchestrator()  # the decision is in the log: both halves are finished

    def finished() -> bool:
        new, old = states(cluster, new_tx), states(cluster, first.transaction_id)
        return set(new.values()) == {pb.HOLD_STATE_COMMITTED} and set(old.values()) == FREED

    assert wait_until(finished), (states(cluster, new_tx), states(cluster, first.transaction_id))
    now = lookup(cluster, "r-crash")
    assert now.success and now.transaction_id == new_tx
    assert sum(p.bandwidth_bps for p in now.paths) == 6 * G
    assert_ledgers_agree(cluster, [now])
