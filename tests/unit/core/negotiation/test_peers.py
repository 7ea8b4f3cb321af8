"""An agent's peer policy: who a caller is, what it may ask for, and the file's checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from braid.core.errors import InputError
from braid.core.negotiation.domains import VlanRange
from braid.core.negotiation.peers import (
    PEER_RULES,
    Peer,
    PeerPolicy,
    check_offer,
    check_prep,
    check_vlan_links,
    identify,
    peer_policy_from_dict,
)
from braid.core.policy import Limits, Violation

G = 10**9
DAY = 86_400
TOKENS = {"east.token": "east-token-0123456789", "west.token": "west-token-0123456789\n"}


def read(path: str, field: str) -> str:
    if path not in TOKENS:
        raise InputError(field, f"no file {path}")
    return TOKENS[path]


def policy(data: object) -> PeerPolicy:
    return peer_policy_from_dict(data, read)


POLICY = policy(
    {
        "east": {
            "subjects": ["orch.east", "east.example.net"],
            "max_bandwidth": "5G",
            "max_duration": "1h",
            "horizon": "2d",
            "vlans": {"a-x1": "150-159,170"},
        },
        "west": {"token_file": "west.token"},
        "banned": {"subjects": "orch.banned", "allowed": False},
    }
)


def test_a_certificate_name_or_a_token_names_the_peer() -> None:
    assert identify(POLICY, ("orch.east",), None) == POLICY.peers["east"]
    assert identify(POLICY, ("127.0.0.1", "east.example.net"), None) == POLICY.peers["east"]
    assert identify(POLICY, (), "west-token-0123456789") == POLICY.peers["west"]
    # A certificate that names a peer decides, whatever token comes with it.
    assert identify(POLICY, ("orch.east",), "west-token-0123456789") == POLICY.peers["east"]


@pytest.mark.parametrize(
    ("subjects", "token", "words"),
    [
        ((), None, "no client certificate or bearer token"),
        ((), "west-token-0123456789x", "bearer token belongs to no known peer"),
        (("orch.stranger",), None, "(orch.stranger) names no known peer"),
    ],
)
def test_an_unknown_caller_is_refused_under_rule_peers(
    subjects: tuple[str, ...], token: str | None, words: str
) -> None:
    found = identify(POLICY, subjects, token)
    assert isinstance(found, Violation) and found.rule == "peers"
    assert words in found.message


def test_each_limit_refuses_by_its_rule() -> None:
    east, now = POLICY.peers["east"], 1_000
    assert check_prep(east, now + 60, now + 3600, 5 * G, now) is None
    over = check_prep(east, now + 60, now + 3600, 6 * G, now)
    assert over is not None and over.rule == "max_bandwidth"
    assert "6 Gbit/s is more than the 5 Gbit/s allowed for peer east" in over.message
    long = check_prep(east, now, now + 3601, G, now)
    assert long is not None and long.rule == "max_duration"
    far = check_offer(east, now + 2 * DAY, now + 2 * DAY + 60, now)
    assert far is not None and far.rule == "horizon"
    banned = check_offer(POLICY.peers["banned"], now, now + 60, now)
    assert banned is not None and banned.rule == "allowed"
    # An offer is not refused for the amount: the amount is the Prep's.
    assert check_offer(east, now + 60, now + 3600, now) is None


limits = st.builds(
    Limits,
    horizon=st.none() | st.integers(1, 10 * DAY),
    max_duration=st.none() | st.integers(1, DAY),
    max_bandwidth=st.none() | st.integers(1, 100 * G),
)


@given(
    limits,
    st.booleans(),
    st.integers(0, 10 * DAY),
    st.integers(1, 2 * DAY),
    st.integers(0, 200 * G),
)
def test_nothing_that_breaks_a_rule_is_admitted_and_every_refusal_names_one(
    lim: Limits, allowed: bool, lead: int, length: int, bandwidth: int
) -> None:
    peer, now = Peer("p", frozenset({"p"}), None, allowed, lim), 5_000
    start, end = now + lead, now + lead + length
    broken = {
        "allowed": not allowed,
        "horizon": lim.horizon is not None and end > now + lim.horizon,
        "max_duration": lim.max_duration is not None and length > lim.max_duration,
        "max_bandwidth": lim.max_bandwidth is not None and bandwidth > lim.max_bandwidth,
    }
    found = check_prep(peer, start, end, bandwidth, now)
    if found is None:
        assert not any(broken.values())
    else:
        assert found.rule in PEER_RULES and broken[found.rule]
        assert found.message and "peer p" in found.message


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ([], "peers"),
        ({}, "peers"),
        ({"east": {"subjects": ["a"], "quota": "1G"}}, "peers.east.quota"),
        ({"east": {"allowed": True}}, "peers.east"),
        ({"east": {"subjects": [3]}}, "peers.east.subjects"),
        ({"east": {"subjects": ["a"], "max_bandwidth": "lots"}}, "peers.east.max_bandwidth"),
        ({"east": {"subjects": ["a"], "max_duration": "soon"}}, "peers.east.max_duration"),
        ({"east": {"subjects": ["a"], "allowed": "yes"}}, "peers.east.allowed"),
        ({"east": {"subjects": ["a"], "vlans": {"l": "300-200"}}}, "peers.east.vlans.l"),
        ({"east": {"subjects": ["a"], "vlans": ["l"]}}, "peers.east.vlans"),
        ({"east": {"token_file": "missing.token"}}, "peers.east.token_file"),
        ({"e": {"subjects": ["a"]}, "w": {"subjects": ["a"]}}, "peers.w.subjects"),
        ({"e": {"token_file": "east.token"}, "w": {"token_file": "east.token"}}, "peers"),
    ],
)
def test_a_bad_policy_names_the_field(data: object, field: str) -> None:
    with pytest.raises(InputError) as caught:
        policy(data)
    assert caught.value.field == field


def test_a_short_token_is_refused() -> None:
    TOKENS["short.token"] = "abc"
    try:
        with pytest.raises(InputError, match="at least 16"):
            policy({"e": {"token_file": "short.token"}})
    finally:
        del TOKENS["short.token"]


def test_vlan_ranges_must_lie_on_owned_links_within_their_range() -> None:
    owned = {"a-x1": VlanRange(100, 199)}
    check_vlan_links(POLICY, owned)
    with pytest.raises(InputError) as caught:
        check_vlan_links(POLICY, {"a-x1": VlanRange(100, 160)})
    assert caught.value.field == "peers.east.vlans.a-x1" and "100-160" in str(caught.value)
    with pytest.raises(InputError, match="not a border link this domain owns"):
        check_vlan_links(POLICY, {"b-x1": VlanRange(100, 199)})
