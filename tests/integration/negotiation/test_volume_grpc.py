"""Volume reservations over the Orchestrator service (gRPC), with real agent processes:
Reserve with `Reservation.volume`, a profile that fits and one refused with the most by
the deadline, Lookup and Cancel, and bad fields refused with the field named."""

from __future__ import annotations

import time

import grpc
import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import states

pytestmark = pytest.mark.slow

G = 10**9
ON_W1 = {"site-a", "w1", "site-b"}  # w2 is blind: a volume goes through w1 alone (10G)


def volume(
    rid: str, volume_bytes: int, not_before: int, deadline: int, policing: str = ""
) -> pb.Reservation:
    return pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        volume=pb.Volume(bytes=volume_bytes, not_before=not_before, deadline=deadline),
        policing=policing,
    )


def refusal(cluster: LocalCluster, request: pb.Reservation) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as raised:
        cluster.reserve(request)
    error: grpc.RpcError = raised.value
    return error


def test_a_hard_volume_s_steps_carry_hard_rules(cluster: LocalCluster) -> None:
    start = int(time.time()) + 60
    reply = cluster.reserve(volume("v-hard", 10**12, start, start + 3600, policing="hard"))
    assert reply.success, reply.reason
    (step,) = reply.volume.steps
    assert step.switches and all(plan.policing == "hard" for plan in step.switches)
    edge_rates = {w.rate for plan in step.switches for r in plan.rules for w in r.ways}
    assert step.rate_bps in edge_rates  # the way out of site A's edge carries the step's rate
    assert cluster.orchestrator().Cancel(pb.CancelQuery(id="v-hard")).status == "cancelled"


def test_a_volume_that_fits_commits_every_step_and_cancel_frees_them(
    cluster: LocalCluster,
) -> None:
    start = int(time.time()) + 60
    # 1 TB = 8000 Gbit at w1's 10G: 800 s, one step.
    reply = cluster.reserve(volume("v-fits", 10**12, start, start + 3600))
    assert reply.success and reply.status == "committed", reply.reason
    profile = reply.volume
    assert profile.bytes == 10**12
    assert [(s.start, s.end, s.rate_bps) for s in profile.steps] == [(start, start + 800, 10 * G)]
    assert profile.completion == start + 800
    assert ["site-a", "w1", "site-b"] in [list(p.domains) for p in profile.paths]
    (step,) = profile.steps
    assert step.transaction_id.startswith(reply.transaction_id)
    assert {plan.domain for plan in step.switches} == {"site-a", "site-b"}  # the edges' rules
    assert all(plan.rules and plan.policing == "soft" for plan in step.switches)
    assert states(cluster, step.transaction_id) == dict.fromkeys(ON_W1, pb.HOLD_STATE_COMMITTED)
    orchestrator = cluster.orchestrator()
    assert orchestrator.Lookup(pb.ReservationQuery(id="v-fits")) == reply
    # The same request again answers its first outcome; another under the same id is refused.
    assert cluster.reserve(volume("v-fits", 10**12, start, start + 3600)) == reply
    with pytest.raises(grpc.RpcError) as taken:
        cluster.reserve(volume("v-fits", 2 * 10**12, start, start + 3600))
    assert taken.value.code() is grpc.StatusCode.ALREADY_EXISTS
    with pytest.raises(grpc.RpcError) as modified:
        orchestrator.Modify(pb.ModifyQuery(id="v-fits", bandwidth_bps=G))
    assert modified.value.code() is grpc.StatusCode.INVALID_ARGUMENT  # a window's field
    assert (modified.value.details() or "").startswith("bandwidth_bps: ")
    cancelled = orchestrator.Cancel(pb.CancelQuery(id="v-fits"))
    assert cancelled.status == "cancelled" and not cancelled.success
    assert cancelled.volume.steps == profile.steps
    assert states(cluster, step.transaction_id) == dict.fromkeys(ON_W1, pb.HOLD_STATE_RELEASED)
    assert orchestrator.Lookup(pb.ReservationQuery(id="v-fits")).status == "cancelled"


def test_a_volume_too_big_is_refused_with_the_most_by_the_deadline(
    cluster: LocalCluster,
) -> None:
    start = int(time.time()) + 60
    # 10G for 100 s is 125 GB; 250 GB would need 200 s.
    reply = cluster.reserve(volume("v-big", 250 * 10**9, start, start + 100))
    assert not reply.success and reply.status == "failed"
    assert reply.volume.most_by_deadline_bytes == 125 * 10**9
    assert reply.volume.earliest_completion == start + 200
    assert "125000000000 of 250000000000 bytes" in reply.reason
    assert list(reply.volume.steps) == [] and reply.volume.completion == 0
    lookup = cluster.orchestrator().Lookup(pb.ReservationQuery(id="v-big"))
    assert lookup == reply
    assert all(not states(cluster, f"{reply.transaction_id}.s{i}") for i in range(2))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"volume": pb.Volume(bytes=0, deadline=1)}, "volume.bytes"),
        ({"volume": pb.Volume(bytes=10**9, not_before=1, deadline=2)}, "volume.not_before"),
        ({"volume": pb.Volume(bytes=10**9)}, "volume.deadline"),
        ({"bandwidth_bps": G}, "bandwidth_bps"),
        ({"strategy": pb.STRATEGY_EQUAL_SPLIT}, "strategy"),
        ({"policing": "strict"}, "policing"),
        ({"max_paths": 9}, "max_paths"),
        ({"source": pb.Endpoint(domain="w1", point="x")}, "source.domain"),
    ],
)
def test_a_bad_volume_is_refused_naming_the_field_and_holds_nothing(
    shared_cluster: LocalCluster, change: dict[str, object], field: str
) -> None:
    start = int(time.time()) + 60
    request = volume("v-bad", 10**9, start, start + 600)
    for name, value in change.items():
        if isinstance(value, pb.Volume | pb.Endpoint):
            getattr(request, name).CopyFrom(value)
        else:
            setattr(request, name, value)
    error = refusal(shared_cluster, request)
    assert error.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert error.details().startswith(f"{field}: "), error.details()
    with pytest.raises(grpc.RpcError) as unknown:  # nothing kept: the id is still free
        shared_cluster.orchestrator().Lookup(pb.ReservationQuery(id="v-bad"))
    assert unknown.value.code() is grpc.StatusCode.NOT_FOUND
