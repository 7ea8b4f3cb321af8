"""braid's HTB queues on a port, against an in-memory `tc` (real tc: tests/integration)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.adapters.southbound.tc_queues import TcQueues, class_of, held, shown_rate
from braid.core.rules.enforcement import Queue
from tests.unit.adapters.southbound.fake_tc import FakeTc

LINE = 100_000_000
HARD = Queue(3, 7, 60_000_000, 60_000_000, LINE)
SOFT = Queue(3, 9, 30_000_000, LINE, LINE)


def queues_on(*netdevs: str) -> tuple[TcQueues, FakeTc]:
    fake = FakeTc(netdevs)
    return TcQueues(fake), fake


def best_effort_rate(fake: FakeTc, netdev: str = "s1-eth3") -> int:
    return fake.devs[netdev].classes["b7a1:2"].rate_bytes * 8


def test_queues_read_back_as_applied_and_best_effort_gets_the_rest() -> None:
    tc, fake = queues_on("s1-eth3")
    tc.apply("s1-eth3", [HARD, SOFT])
    assert tc.dump("s1-eth3", 3) == (HARD, SOFT)
    assert best_effort_rate(fake) == LINE - 90_000_000
    soft_class = fake.devs["s1-eth3"].classes[class_of(9)]
    assert (soft_class.prio, fake.devs["s1-eth3"].classes["b7a1:2"].prio) == (1, 0)


def test_applying_again_or_changing_one_queue_keeps_the_tree_in_place() -> None:
    tc, fake = queues_on("s1-eth3")
    tc.apply("s1-eth3", [HARD, SOFT])
    fake.calls.clear()
    tc.apply("s1-eth3", [HARD, SOFT])
    faster = Queue(3, 7, 70_000_000, 70_000_000, LINE)
    tc.apply("s1-eth3", [faster])
    changes = [c[:2] for c in fake.calls if c[1] not in ("show",)]
    assert ["qdisc", "del"] not in changes
    assert not [c for c in fake.calls if c[:2] == ["qdisc", "replace"] and "root" in c]
    assert ["filter", "add"] not in changes  # the filters were there already
    replaced_leaves = [c for c in fake.calls if c[:2] == ["qdisc", "replace"]]
    assert [c[c.index("parent") + 1] for c in replaced_leaves] == [class_of(7)]  # its ceil moved
    assert tc.dump("s1-eth3", 3) == (faster, SOFT)
    assert best_effort_rate(fake) == LINE - 100_000_000 + LINE // 100  # never under 1%


def test_every_class_queues_a_few_milliseconds_at_its_ceil() -> None:
    tc, fake = queues_on("s1-eth3")
    tc.apply("s1-eth3", [HARD, SOFT])
    leaves = fake.devs["s1-eth3"].leaves
    assert leaves == {class_of(7): 37_500, class_of(9): 62_500, "b7a1:2": 62_500}


def test_removing_queues_deletes_them_alone_then_braids_qdisc() -> None:
    tc, fake = queues_on("s1-eth3")
    tc.apply("s1-eth3", [HARD, SOFT])
    tc.remove("s1-eth3", [HARD])
    assert tc.dump("s1-eth3", 3) == (SOFT,)
    assert best_effort_rate(fake) == LINE - 30_000_000
    tc.remove("s1-eth3", [SOFT])
    assert fake.devs["s1-eth3"].qdisc is None  # the port is back to its default
    tc.remove("s1-eth3", [SOFT])  # removing what is not there is no error
    assert tc.dump("s1-eth3", 3) == ()


def test_a_queue_whose_filter_was_lost_is_not_reported_and_apply_restores_it() -> None:
    tc, fake = queues_on("s1-eth3")
    tc.apply("s1-eth3", [HARD, SOFT])
    del fake.devs["s1-eth3"].filters[0x1000 + 7]
    assert tc.dump("s1-eth3", 3) == (SOFT,)
    tc.apply("s1-eth3", [HARD])
    assert tc.dump("s1-eth3", 3) == (HARD, SOFT)


def test_another_root_qdisc_is_not_braids() -> None:
    tc, fake = queues_on("s1-eth3")
    fake.devs["s1-eth3"].qdisc = "tbf 5:"
    assert tc.dump("s1-eth3", 3) == ()
    tc.remove("s1-eth3", [HARD])
    assert fake.devs["s1-eth3"].qdisc == "tbf 5:"


def test_a_missing_netdev_is_an_error_naming_it() -> None:
    tc, _ = queues_on("s1-eth3")
    with pytest.raises(Exception, match="s1-eth9"):
        tc.apply("s1-eth9", [HARD])


# What iproute2 6.1 printed for rates given in bit/s (tc class show).
@pytest.mark.parametrize(
    ("given_bps", "shown_bps"),
    [
        (100_000_000, 100_000_000),
        (33_333_333, 33_333_000),  # "33333Kbit"
        (60_000_008, 60_000_000),  # "60Mbit"
        (1_500_000_000, 1_500_000_000),  # "1500Mbit"
        (12_345, 12_352),  # written as whole bytes/s, rounded up: 1544, "12352bit"
        (1, 8),
    ],
)
def test_rates_are_read_back_as_tc_shows_them(given_bps: int, shown_bps: int) -> None:
    assert shown_rate(given_bps) == shown_bps


@given(st.integers(1, 10**11), st.integers(1, 4094))
def test_any_queue_reads_back_as_held(rate: int, vlan: int) -> None:
    tc, _ = queues_on("p")
    queue = Queue(1, vlan, rate, rate, 2 * rate)
    tc.apply("p", [queue])
    assert tc.dump("p", 1) == (held(queue),)
