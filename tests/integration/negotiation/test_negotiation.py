"""Negotiation over real gRPC between real processes: the happy paths and the strategies."""

from __future__ import annotations

import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import G, assert_ledgers_agree, reservation

pytestmark = pytest.mark.slow


def test_one_path_then_a_split_that_needs_the_blind_wan(cluster: LocalCluster) -> None:
    first = cluster.reserve(reservation("r1", 4, paths=1))
    assert first.success, first.reason
    assert [[s.domain for s in p.segments] for p in first.paths] == [["site-a", "w1", "site-b"]]
    second = cluster.reserve(reservation("r2", 14))
    assert second.success, second.reason
    shares = sorted(p.bandwidth_bps for p in second.paths)
    assert shares == [6 * G, 8 * G]  # w1's 6 left from its offer, the rest asked of blind w2
    assert any(e.phase == "prep" and e.domain == "w2" for e in second.trace)
    assert_ledgers_agree(cluster, [first, second])


def test_a_request_that_cannot_fit_holds_nothing(cluster: LocalCluster) -> None:
    reply = cluster.reserve(reservation("big", 25))
    assert not reply.success and reply.reason
    assert_ledgers_agree(cluster, [reply])


def test_full_offers_refuses_when_a_domain_is_blind(cluster: LocalCluster) -> None:
    reply = cluster.reserve(reservation("full", 12, strategy=pb.STRATEGY_FULL_OFFERS))
    assert not reply.success and "blind" in reply.reason
    assert_ledgers_agree(cluster, [reply])


def test_equal_split_asks_every_domain(cluster: LocalCluster) -> None:
    reply = cluster.reserve(reservation("eq", 8, strategy=pb.STRATEGY_EQUAL_SPLIT))
    assert reply.success, reply.reason
    assert sorted(p.bandwidth_bps for p in reply.paths) == [4 * G, 4 * G]
    assert_ledgers_agree(cluster, [reply])


def test_a_repeated_reservation_id_returns_the_first_outcome(cluster: LocalCluster) -> None:
    first = cluster.reserve(reservation("same", 2))
    again = cluster.reserve(reservation("same", 2))
    assert again.transaction_id == first.transaction_id and again.success
    assert_ledgers_agree(cluster, [first])


def test_a_bad_reservation_is_an_invalid_argument(cluster: LocalCluster) -> None:
    import grpc

    bad = reservation("bad", 2)
    bad.source.domain = "w1"
    with pytest.raises(grpc.RpcError) as caught:
        cluster.reserve(bad)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "source.domain" in caught.value.details()
