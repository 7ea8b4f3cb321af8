"""The booking policy's rules, against a brute-force reading of each rule."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.policy import (
    RULES,
    Booked,
    Limits,
    Policy,
    check_booking,
    peak_bandwidth,
    policy_from_dict,
)

NODES = ("A", "B", "C")
NOW = 100

maybe = st.none() | st.integers(min_value=1, max_value=60)
limits = st.builds(
    Limits,
    horizon=maybe,
    max_duration=maybe,
    max_bandwidth=maybe,
    quota=maybe,
    endpoints=st.none() | st.frozensets(st.sampled_from(NODES)),
    byte_quota=st.none() | st.integers(min_value=1, max_value=400),
)
windows = st.tuples(st.integers(NOW, NOW + 60), st.integers(1, 40)).map(
    lambda w: (w[0], w[0] + w[1])
)
others = st.lists(
    st.builds(lambda w, bw: Booked(w[0], w[1], bw), windows, st.integers(1, 20)), max_size=5
)


def _level_at(booked: list[Booked], t: int) -> int:
    return sum(b.bandwidth for b in booked if b.start <= t < b.end)


def _broken(
    lim: Limits, src: str, dst: str, start: int, end: int, bw: int, booked: list[Booked]
) -> set[str]:
    """Every rule the booking breaks, each read as plainly as possible."""
    broken: set[str] = set()
    if lim.endpoints is not None and not {src, dst} <= lim.endpoints:
        broken.add("endpoints")
    if lim.horizon is not None and end > NOW + lim.horizon:
        broken.add("horizon")
    if lim.max_duration is not None and end - start > lim.max_duration:
        broken.add("max_duration")
    if lim.max_bandwidth is not None and bw > lim.max_bandwidth:
        broken.add("max_bandwidth")
    if lim.quota is not None:
        worst = max(
            sum(b.bandwidth for b in booked if b.start <= t < b.end) for t in range(start, end)
        )
        if worst + bw > lim.quota:
            broken.add("quota")
    if lim.byte_quota is not None:
        owned = sum(b.bandwidth * (b.end - b.start) // 8 for b in booked)
        if owned + bw * (end - start) // 8 > lim.byte_quota:
            broken.add("byte_quota")
    return broken


@given(limits, st.sampled_from(NODES), st.sampled_from(NODES), windows, st.integers(1, 70), others)
def test_a_booking_passes_exactly_when_it_breaks_no_rule(
    lim: Limits,
    src: str,
    dst: str,
    window: tuple[int, int],
    bandwidth: int,
    booked: list[Booked],
) -> None:
    start, end = window
    owned = sum(b.bytes for b in booked)
    found = check_booking(
        lim, src=src, dst=dst, start=start, end=end, bandwidth=bandwidth, now=NOW, others=booked,
        owned_bytes=owned,
    )  # fmt: skip
    broken = _broken(lim, src, dst, start, end, bandwidth, booked)
    if not broken:
        assert found is None
    else:
        assert found is not None and found.rule in broken
        assert found.rule in RULES and found.message


@given(others, windows)
def test_the_peak_is_the_highest_sum_at_any_instant(
    booked: list[Booked], window: tuple[int, int]
) -> None:
    start, end = window
    plain = max(sum(b.bandwidth for b in booked if b.start <= t < b.end) for t in range(start, end))
    assert peak_bandwidth(booked, start, end) == plain


def test_a_user_s_own_limits_override_the_role_s_rule_by_rule() -> None:
    policy = Policy(
        roles={"user": Limits(max_bandwidth=10, horizon=100)},
        users={"alice": Limits(max_bandwidth=40)},
    )
    assert policy.limits_for("alice", "user") == Limits(max_bandwidth=40, horizon=100)
    assert policy.limits_for("bob", "user") == Limits(max_bandwidth=10, horizon=100)
    assert policy.limits_for("olga", "operator") == Limits()


def test_the_policy_s_horizon_binds_whoever_sets_none() -> None:
    policy = Policy(roles={"user": Limits(max_bandwidth=10)}, users={"ann": Limits(horizon=9)})
    assert Policy(horizon=100).limits_for("olga", "operator") == Limits(horizon=100)
    under = replace(policy, horizon=100)
    assert under.limits_for("bob", "user") == Limits(horizon=100, max_bandwidth=10)
    assert under.limits_for("ann", "user") == Limits(horizon=9, max_bandwidth=10)


def test_a_horizon_refusal_says_the_limit_in_days() -> None:
    found = check_booking(
        Limits(horizon=365 * 86400), src="A", dst="B", start=NOW, end=NOW + 400 * 86400,
        bandwidth=1, now=NOW,
    )  # fmt: skip
    assert found is not None and found.rule == "horizon"
    assert "within 365 days of now" in found.message


def test_rules_read_with_units_from_a_settings_file() -> None:
    policy = policy_from_dict(
        {
            "roles": {"user": {"horizon": "90d", "max_duration": "7d", "max_bandwidth": "100G"}},
            "users": {"alice": {"quota": "20G", "endpoints": ["ORNL", "NERSC"]}},
        }
    )
    assert policy.roles["user"] == Limits(
        horizon=90 * 86400, max_duration=7 * 86400, max_bandwidth=100 * 10**9
    )
    assert policy.users["alice"] == Limits(quota=20 * 10**9, endpoints=frozenset({"ORNL", "NERSC"}))


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"groups": {}}, "policy.groups"),
        ({"roles": {"user": {"max_speed": "1G"}}}, "policy.roles.user.max_speed"),
        ({"roles": {"user": {"max_bandwidth": "lots"}}}, "policy.roles.user.max_bandwidth"),
        ({"users": {"alice": {"horizon": "soon"}}}, "policy.users.alice.horizon"),
        ({"users": {"alice": {"endpoints": "ORNL"}}}, "policy.users.alice.endpoints"),
        ({"roles": ["user"]}, "policy.roles"),
    ],
)
def test_a_bad_rule_names_its_path(data: object, field: str) -> None:
    with pytest.raises(InputError) as caught:
        policy_from_dict(data)
    assert caught.value.field == field


def test_a_byte_quota_reads_bytes_and_its_refusal_says_what_is_booked() -> None:
    policy = policy_from_dict({"users": {"alice": {"byte_quota": "40TB"}}})
    limits = policy.users["alice"]
    assert limits.byte_quota == 40 * 10**12 and limits.counts_others
    found = check_booking(
        limits, src="A", dst="B", start=0, end=1000, bandwidth=8 * 10**10, now=0,
        owned_bytes=35 * 10**12,
    )  # fmt: skip
    assert found is not None and found.rule == "byte_quota"
    assert found.message == (
        "with 35 TB already booked, 10 TB more is over the byte quota of 40 TB"
    )
    with pytest.raises(InputError, match=r"users\.alice\.byte_quota"):
        policy_from_dict({"users": {"alice": {"byte_quota": "40Tb"}}})
