"""kill -9 at every step of the two-phase commit: the outcome never splits.

Each scenario ends with the same outcome in every domain and in the
orchestrator's Lookup (all committed, or nothing held), no hold left
prepared, no link over its capacity.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import (
    SMALL,
    assert_ledgers_agree,
    reservation,
    states,
    wait_until,
)

pytestmark = pytest.mark.slow

ROUTE = frozenset({"site-a", "w1", "site-b"})  # one path, w1 visible: these three take part
FREED = (pb.HOLD_STATE_ABORTED, pb.HOLD_STATE_RELEASED)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """The small network with 1-second holds, so that "down longer than its hold" is quick."""
    source = tmp_path / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))
    args = ["--timeout", "1", "--hold", "1"]
    with LocalCluster(source, tmp_path / "run", orchestrator_args=args) as running:
        yield running


def lookup(cluster: LocalCluster, rid: str) -> pb.ReservationResp:
    def answer() -> pb.ReservationResp | None:
        try:
            reply: pb.ReservationResp = cluster.orchestrator().Lookup(
                pb.ReservationQuery(id=rid), timeout=5
            )
        except grpc.RpcError:
            return None
        return reply

    found: pb.ReservationResp | None = wait_until(answer)
    assert found is not None, f"no answer for {rid}"
    return found


def settle(cluster: LocalCluster, rid: str, committed: bool) -> pb.ReservationResp:
    """Wait for every domain to reach the outcome; check it is the same everywhere."""
    answer = lookup(cluster, rid)
    want = pb.HOLD_STATE_COMMITTED if committed else None

    def agreed() -> bool:
        seen = states(cluster, answer.transaction_id)
        if committed:
            return seen == dict.fromkeys(ROUTE, want)
        return all(state in FREED for state in seen.values())

    assert wait_until(agreed), states(cluster, answer.transaction_id)
    assert answer.success is committed and answer.status == ("committed" if committed else "failed")
    extra = {answer.transaction_id: ROUTE} if committed else {}
    assert_ledgers_agree(cluster, [], extra)
    return answer


def complete(answer: pb.ReservationResp) -> None:
    """A recovered result is the whole result: paths, shares, VLANs and the rule plan."""
    assert answer.paths and all(p.vlans for p in answer.paths)
    assert sum(p.bandwidth_bps for p in answer.paths) == 3 * 10**9
    assert answer.switches and all(sw.rules for sw in answer.switches)


def test_killed_before_any_prep_nothing_is_held(cluster: LocalCluster) -> None:
    cluster.terminate("orchestrator")
    cluster.start_orchestrator(env={"BRAID_FAULT_ORCHESTRATOR": "exit-before-prep"})
    with pytest.raises(grpc.RpcError):
        cluster.reserve(reservation("r-before", 3, paths=1))
    assert cluster.wait_exit("orchestrator") == 70
    cluster.start_orchestrator()
    answer = settle(cluster, "r-before", committed=False)
    assert "restarted before deciding" in answer.reason


def test_killed_after_some_votes_everything_is_aborted(cluster: LocalCluster) -> None:
    cluster.terminate("w1")
    cluster.start_agent("w1", env={"BRAID_FAULT_AGENT": "slow-prep=1.5"})
    failures: list[grpc.RpcError] = []

    def call() -> None:
        try:
            cluster.reserve(reservation("r-votes", 3))
        except grpc.RpcError as exc:  # the orchestrator dies under it
            failures.append(exc)

    caller = threading.Thread(target=call)
    caller.start()

    def sites_voted() -> list[str]:
        held = [d for d, r in cluster.reports().items() for t in r.transactions if t.state == 1]
        return sorted(held) if sorted(held) == ["site-a", "site-b"] else []

    # The sites voted yes while w1 is still preparing (1.5 s): polled, since on a loaded
    # host the rounds before the Preps may take longer than any fixed wait.
    voted = wait_until(sites_voted, timeout=10)
    cluster.kill("orchestrator")
    caller.join()
    assert voted == ["site-a", "site-b"] and failures
    cluster.start_orchestrator()  # presumed abort: every domain that may hold hears Abort
    time.sleep(1.2)  # let w1's late Prep land: refused, or aborted after it
    settle(cluster, "r-votes", committed=False)


def test_killed_after_the_decision_the_commit_is_finished_and_whole(
    cluster: LocalCluster,
) -> None:
    cluster.terminate("orchestrator")
    cluster.start_orchestrator(env={"BRAID_FAULT_ORCHESTRATOR": "exit-after-decide"})
    with pytest.raises(grpc.RpcError):
        cluster.reserve(reservation("r-decided", 3, paths=1))
    assert cluster.wait_exit("orchestrator") == 70
    time.sleep(1.5)  # past every hold's time: prepared holds wait for the decision all the same
    cluster.start_orchestrator()
    complete(settle(cluster, "r-decided", committed=True))


def test_killed_during_commit_the_rest_is_committed_on_restart(cluster: LocalCluster) -> None:
    cluster.terminate("w1")
    cluster.start_agent("w1", env={"BRAID_FAULT_AGENT": "exit-on-commit"})
    reply = cluster.reserve(reservation("r-commit", 3, paths=1))
    assert reply.success, reply.reason  # decided; w1 died on its Commit
    cluster.kill("orchestrator")  # Commit not finished: w1 never acknowledged
    assert cluster.wait_exit("w1") == 70
    cluster.start_agent("w1")
    cluster.start_orchestrator()
    answer = settle(cluster, "r-commit", committed=True)
    complete(answer)
    assert [(p.bandwidth_bps, list(p.vlans)) for p in answer.paths] == [
        (p.bandwidth_bps, list(p.vlans)) for p in reply.paths
    ]
    assert list(answer.switches) == list(reply.switches)


def test_an_agent_down_longer_than_its_hold_commits_when_back(cluster: LocalCluster) -> None:
    cluster.terminate("w1")
    cluster.start_agent("w1", env={"BRAID_FAULT_AGENT": "exit-on-commit"})
    reply = cluster.reserve(reservation("r-away", 3, paths=1))
    assert reply.success, reply.reason
    assert cluster.wait_exit("w1") == 70
    cluster.terminate("orchestrator")  # nobody re-sends the Commit while w1 is away
    time.sleep(2.5)  # w1's hold time (1 s) runs out while it is down
    cluster.start_orchestrator()
    cluster.start_agent("w1")  # asks its coordinator at once, or hears the re-sent Commit
    complete(settle(cluster, "r-away", committed=True))


def test_lookup_returns_after_a_crash_what_it_returned_before(cluster: LocalCluster) -> None:
    reply = cluster.reserve(reservation("r-same", 3, paths=1))
    before = lookup(cluster, "r-same")
    cluster.kill("orchestrator")
    cluster.start_orchestrator()
    after = lookup(cluster, "r-same")
    assert after == before and reply.success
    complete(after)


def _token(cluster: LocalCluster, domain: str, transaction: str) -> str:
    with sqlite3.connect(cluster.workdir / f"{domain}.db") as db:
        row = db.execute(
            "SELECT token FROM agent_holds WHERE transaction_id = ?", (transaction,)
        ).fetchone()
    return str(row[0])


def test_a_domain_that_cannot_honour_the_commit_fails_it_everywhere(
    cluster: LocalCluster,
) -> None:
    cluster.terminate("orchestrator")
    cluster.start_orchestrator(env={"BRAID_FAULT_ORCHESTRATOR": "exit-after-decide"})
    with pytest.raises(grpc.RpcError):
        cluster.reserve(reservation("r-forced", 3, paths=1))
    assert cluster.wait_exit("orchestrator") == 70
    (tx,) = {t.transaction_id for r in cluster.reports().values() for t in r.transactions}
    # w1's operator aborts the prepared hold by hand (with the token from its store).
    cluster.agent("w1").AbortHold(pb.Abort(transaction_id=tx, token=_token(cluster, "w1", tx)))
    cluster.start_orchestrator()  # re-sends COMMIT: w1 cannot; the others are released
    answer = settle(cluster, "r-forced", committed=False)
    held = {h.domain: h.state for h in answer.holdings}
    assert held == {"w1": "refused-commit", "site-a": "released", "site-b": "released"}
    assert "w1 could not honour the commit" in answer.reason


def test_a_caller_that_gives_up_leaves_the_negotiation_to_finish(cluster: LocalCluster) -> None:
    cluster.terminate("w1")
    cluster.start_agent("w1", env={"BRAID_FAULT_AGENT": "slow-prep=0.6"})  # within --timeout 1
    with pytest.raises(grpc.RpcError) as gave_up:
        cluster.orchestrator().Reserve(reservation("r-impatient", 3, paths=1), timeout=0.2)
    assert gave_up.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    # The orchestrator went on: the same outcome in every domain and in Lookup.
    complete(settle(cluster, "r-impatient", committed=True))
