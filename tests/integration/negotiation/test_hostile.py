"""Repeated, reordered, malformed and hostile messages get a clear gRPC error and change nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import grpc
import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from tests.integration.negotiation.conftest import TOKEN, G, assert_ledgers_agree

pytestmark = pytest.mark.slow


def prep_message(tx: str = "tx-1", **change: Any) -> pb.ReservationPrep:
    now = int(time.time())
    message = pb.ReservationPrep(
        transaction_id=tx,
        token=TOKEN,
        window=pb.Window(start=now + 60, end=now + 600),
        segments=[pb.Segment(span=pb.Span(entry="w1-x", exit="w1-y"), bandwidth_bps=2 * G)],
        hold_seconds=60,
    )
    for key, value in change.items():
        if key == "window":
            message.window.CopyFrom(value)
        elif key == "bandwidth":
            message.segments[0].bandwidth_bps = value
        elif key == "exit":
            message.segments[0].span.exit = value
        else:
            setattr(message, key, value)
    return message


def snapshot(cluster: LocalCluster) -> list[tuple[str, int]]:
    report = cluster.agent("w1").Status(pb.StatusQuery(), timeout=5)
    return sorted((t.transaction_id, t.state) for t in report.transactions)


def rejected(call: Callable[[], Any]) -> tuple[Any, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    error = dict(caught.value.trailing_metadata() or ()).get("braid-error", "")
    return caught.value.code(), error


def test_commit_and_abort_repeated_or_reordered_change_nothing(cluster: LocalCluster) -> None:
    w1 = cluster.agent("w1")
    assert w1.Prepare(prep_message("tx-a"), timeout=5).yes
    first = w1.CommitHold(pb.Commit(transaction_id="tx-a", token=TOKEN), timeout=5)
    again = w1.CommitHold(pb.Commit(transaction_id="tx-a", token=TOKEN), timeout=5)
    assert (first.changed, again.changed) == (True, False)
    assert again.state == pb.HOLD_STATE_COMMITTED
    code, error = rejected(lambda: w1.AbortHold(pb.Abort(transaction_id="tx-a", token=TOKEN)))
    assert (code, error) == (grpc.StatusCode.FAILED_PRECONDITION, "ERROR_CODE_CONFLICT")
    # An Abort that overtakes its Prep: the late Prep is refused.
    early = w1.AbortHold(pb.Abort(transaction_id="tx-b", token=TOKEN), timeout=5)
    assert early.state == pb.HOLD_STATE_ABORTED
    code, _ = rejected(lambda: w1.Prepare(prep_message("tx-b"), timeout=5))
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert w1.AbortHold(pb.Abort(transaction_id="tx-b", token=TOKEN)).changed is False
    assert_ledgers_agree(cluster, [], {"tx-a": frozenset({"w1"})})


def test_a_hold_past_its_time_is_freed_or_settled_by_its_coordinator(
    cluster: LocalCluster,
) -> None:
    """Holds end at their hold time whoever asked: with nobody to ask, the hold is freed
    (expired) and a late Commit refused; with a coordinator to ask, that coordinator's
    answer (here: unknown, so presumed abort) frees it."""
    w1 = cluster.agent("w1")
    assert w1.Prepare(prep_message("tx-e", hold_seconds=1), timeout=5).yes
    coordinator = f"127.0.0.1:{cluster.ports['orchestrator']}"
    asked = prep_message("tx-f", hold_seconds=1, coordinator=coordinator)
    assert w1.Prepare(asked, timeout=5).yes
    time.sleep(2.5)
    report = w1.Status(pb.StatusQuery(), timeout=5)
    found = {t.transaction_id: t.state for t in report.transactions}
    assert found == {"tx-e": pb.HOLD_STATE_EXPIRED, "tx-f": pb.HOLD_STATE_ABORTED}
    for tx in ("tx-e", "tx-f"):
        commit = pb.Commit(transaction_id=tx, token=TOKEN)
        _, error = rejected(partial(w1.CommitHold, commit))
        assert error == "ERROR_CODE_CONFLICT"
    assert_ledgers_agree(cluster, [], {})


def _past() -> pb.Window:
    now = int(time.time())
    return pb.Window(start=now - 3600, end=now - 60)


HOSTILE = [
    ("wrong token on commit", "commit", {"token": "x" * 20}, "ERROR_CODE_BAD_TOKEN"),
    ("wrong token on abort", "abort", {"token": "x" * 20}, "ERROR_CODE_BAD_TOKEN"),
    ("unknown transaction", "commit", {"transaction_id": "nope"}, "ERROR_CODE_UNKNOWN_TRANSACTION"),
    ("huge bandwidth", "prep", {"bandwidth": 2**63}, "ERROR_CODE_BANDWIDTH_TOO_LARGE"),
    ("zero bandwidth", "prep", {"bandwidth": 0}, "ERROR_CODE_MALFORMED"),
    ("window in the past", "prep", {"window": "past"}, "ERROR_CODE_WINDOW_IN_PAST"),
    ("no window", "prep", {"window": pb.Window()}, "ERROR_CODE_MALFORMED"),
    ("unknown point", "prep", {"exit": "elsewhere"}, "ERROR_CODE_UNKNOWN_POINT"),
    ("bad transaction id", "prep", {"transaction_id": "a b"}, "ERROR_CODE_MALFORMED"),
    ("short token", "prep", {"token": "abc"}, "ERROR_CODE_BAD_TOKEN"),
    ("steal a held transaction", "prep", {"token": "y" * 20}, "ERROR_CODE_BAD_TOKEN"),
]


@pytest.mark.parametrize(("story", "kind", "change", "error"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_messages_change_nothing(
    shared_cluster: LocalCluster, story: str, kind: str, change: dict[str, Any], error: str
) -> None:
    cluster = shared_cluster
    w1 = cluster.agent("w1")
    assert w1.Prepare(prep_message("held"), timeout=5).yes
    before = snapshot(cluster)
    fields = {k: (_past() if v == "past" else v) for k, v in change.items()}
    tx = str(fields.pop("transaction_id", "held"))
    token = str(fields.pop("token", TOKEN))
    if kind == "commit":
        call = lambda: w1.CommitHold(pb.Commit(transaction_id=tx, token=token), timeout=5)  # noqa: E731
    elif kind == "abort":
        call = lambda: w1.AbortHold(pb.Abort(transaction_id=tx, token=token), timeout=5)  # noqa: E731
    else:
        message = prep_message(tx, token=token, **fields)
        call = lambda: w1.Prepare(message, timeout=5)  # noqa: E731
    _, got = rejected(call)
    assert got == error, story
    assert snapshot(cluster) == before


def test_a_blind_domain_gives_no_offers(shared_cluster: LocalCluster) -> None:
    cluster = shared_cluster
    now = int(time.time())
    ask = pb.ReqOffers(
        transaction_id="tx-o",
        token=TOKEN,
        window=pb.Window(start=now + 60, end=now + 600),
        spans=[pb.Span(entry="w2-x", exit="w2-y")],
    )
    code, error = rejected(lambda: cluster.agent("w2").RequestOffers(ask, timeout=5))
    assert (code, error) == (grpc.StatusCode.FAILED_PRECONDITION, "ERROR_CODE_BLIND_DOMAIN")
    ask.spans[0].CopyFrom(pb.Span(entry="w1-x", exit="w1-y"))
    offers = cluster.agent("w1").RequestOffers(ask, timeout=5)
    report = cluster.agent("w1").Status(pb.StatusQuery(), timeout=5)
    live = (pb.HOLD_STATE_HELD, pb.HOLD_STATE_COMMITTED)
    taken = sum(s.bandwidth_bps for t in report.transactions if t.state in live for s in t.segments)
    assert offers.token == TOKEN and offers.offers[0].bandwidth_bps == 10 * G - taken
