"""The booking policy through the REST API: refusals name the rule and change nothing."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from braid.app.ports import Filters
from braid.app.settings import Settings
from braid.core.planning.lifecycle import counts_against_capacity
from braid.core.policy import RULES, Booked, Limits, Policy, check_booking
from tests.api.harness import NOW, Api, body, build, iso

GIGA = 10**9
DAY = 86400


def _policy(**user: Any) -> Policy:
    return Policy(roles={"user": Limits(**user)})


def _post(api: Api, sent: dict[str, Any], who: str = "alice") -> int:
    response = api.client.post("/v1/reservations", json=sent, headers=api.auth(who))
    return int(response.status_code)


def _refused_for(api: Api, sent: dict[str, Any], rule: str, who: str = "alice") -> None:
    before = api.snapshot()
    response = api.client.post("/v1/reservations", json=sent, headers=api.auth(who))
    assert response.status_code == 403, response.text
    error = response.json()["error"]
    assert error["code"] == "policy"
    assert error["field"] == rule
    assert rule in error["message"]
    assert api.snapshot() == before


def test_too_much_bandwidth_is_refused_naming_the_rule() -> None:
    api = build(policy=_policy(max_bandwidth=10 * GIGA))
    _refused_for(api, body(bandwidth="20G"), "max_bandwidth")
    assert _post(api, body(bandwidth="10G")) == 201


def test_an_operator_keeps_the_operator_role_s_limits() -> None:
    api = build(policy=_policy(max_bandwidth=10 * GIGA))
    sent = body(bandwidth="20G")
    assert (
        api.client.post("/v1/reservations", json=sent, headers=api.auth("olga")).status_code == 201
    )


def test_by_default_a_booking_must_end_within_a_year() -> None:
    api = build(policy=Settings().booking_policy())
    far = body(start="2999-01-01T00:00:00Z", end="2999-01-01T01:00:00Z")
    for who in ("alice", "olga"):
        _refused_for(api, far, "horizon", who)
    response = api.client.post("/v1/reservations", json=far, headers=api.auth("alice"))
    assert "365 days" in response.json()["error"]["message"]
    assert _post(api, body(start=iso(364 * DAY), end=iso(365 * DAY))) == 201
    _refused_for(api, body(start=iso(364 * DAY), end=iso(365 * DAY + 1)), "horizon")


def test_the_horizon_applies_to_the_window_the_planner_chose() -> None:
    api = build(policy=_policy(horizon=2 * DAY))
    _refused_for(api, body(start=iso(3 * DAY), end=iso(3 * DAY + 3600)), "horizon")
    earliest = {
        "src": "ORNL",
        "dst": "NERSC",
        "bandwidth": "10G",
        "mode": "earliest",
        "duration": "1h",
        "not_before": iso(5 * DAY),
    }
    _refused_for(api, earliest, "horizon")


def test_duration_and_endpoints() -> None:
    api = build(policy=_policy(max_duration=3600, endpoints=["ORNL", "NERSC"]))
    _refused_for(api, body(end=iso(3 * 3600)), "max_duration")
    _refused_for(api, body(src="ORNL", dst="ANL"), "endpoints")


def test_a_quota_counts_the_owner_s_overlapping_bookings_only() -> None:
    api = build(policy=_policy(quota=15 * GIGA))
    first = api.client.post("/v1/reservations", json=body(), headers=api.auth("alice"))
    assert first.status_code == 201
    _refused_for(api, body(), "quota")
    later = body(start=iso(7200), end=iso(9000))
    assert (
        api.client.post("/v1/reservations", json=later, headers=api.auth("alice")).status_code
        == 201
    )
    assert (
        api.client.post("/v1/reservations", json=body(), headers=api.auth("bob")).status_code == 201
    )
    cancelled = api.client.delete(
        f"/v1/reservations/{first.json()['id']}", headers=api.auth("alice")
    )
    assert cancelled.status_code == 200
    assert (
        api.client.post("/v1/reservations", json=body(), headers=api.auth("alice")).status_code
        == 201
    )


def test_a_modification_keeps_to_the_policy_too() -> None:
    api = build(policy=_policy(max_bandwidth=10 * GIGA))
    made = api.client.post("/v1/reservations", json=body(bandwidth="5G"), headers=api.auth("alice"))
    before = api.snapshot()
    changed = api.client.patch(
        f"/v1/reservations/{made.json()['id']}",
        json={"bandwidth": "20G"},
        headers=api.auth("alice"),
    )
    assert changed.status_code == 403
    assert changed.json()["error"]["field"] == "max_bandwidth"
    assert api.snapshot() == before


requests = st.fixed_dictionaries(
    {
        "src": st.sampled_from(["ORNL", "NERSC", "ANL"]),
        "dst": st.sampled_from(["NERSC", "ANL", "SLAC"]),
        "bandwidth": st.sampled_from(["2G", "5G", "10G", "20G"]),
        "start": st.integers(0, 6).map(lambda d: iso(d * DAY + 3600)),
        "hours": st.integers(1, 30),
        "who": st.sampled_from(["alice", "bob"]),
    }
)
policies = st.builds(
    lambda horizon, duration, bw, quota: Policy(
        roles={"user": Limits(horizon, duration, bw, quota)},
        users={"bob": Limits(endpoints=frozenset({"ORNL", "NERSC", "SLAC"}))},
    ),
    st.sampled_from([None, 3 * DAY, 5 * DAY]),
    st.sampled_from([None, 6 * 3600, DAY]),
    st.sampled_from([None, 5 * GIGA, 10 * GIGA]),
    st.sampled_from([None, 12 * GIGA, 25 * GIGA]),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policies, st.lists(requests, min_size=1, max_size=8))
def test_nothing_that_breaks_a_rule_is_admitted_and_refusals_name_theirs(
    policy: Policy, asked: list[dict[str, Any]]
) -> None:
    api = build(policy=policy)
    for one in asked:
        start = one["start"]
        sent = {k: one[k] for k in ("src", "dst", "bandwidth")}
        sent |= {"start": start, "duration": f"{one['hours']}h", "mode": "earliest"}
        sent["not_before"], sent["not_after"] = sent.pop("start"), iso(9 * DAY)
        response = api.client.post("/v1/reservations", json=sent, headers=api.auth(one["who"]))
        if response.status_code == 403:
            assert response.json()["error"]["field"] in RULES
    stored = api.repo.find(Filters())
    for record in stored:
        limits = policy.limits_for(record.owner, "user")
        earlier = [
            Booked(r.start, r.end, r.bandwidth)
            for r in stored
            if r.owner == record.owner
            and r.created_at <= record.created_at
            and r.id != record.id
            and counts_against_capacity(r.state, r.end, NOW, r.hold_expires_at)
        ]
        broken = check_booking(
            limits,
            src=record.src,
            dst=record.dst,
            start=record.start,
            end=record.end,
            bandwidth=record.bandwidth,
            now=NOW,
            others=earlier,
        )
        assert broken is None, (record, broken)
