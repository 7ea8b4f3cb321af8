"""A volume across domains held step by step on Open vSwitch: real agent and orchestrator
processes over the veth-linked bridges of `test_domain_enforcement` (its network, scaled
to Mbit/s, and its helpers).

w1 is busier from the cut on, so the volume has two steps of a few seconds: 24 Mbit/s
over both WANs, then 18 Mbit/s. Each step is its own transaction with its own rule plan;
at each step every programmed domain's HTB classes (read back with `tc class show`) are
the step's path shares and, for hard policing, each site's edge meters the step's rate
(`ovs-ofctl dump-meters`); the next step waits out its lead without being reported
failed, and once the last step ends nothing of braid's is left.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from braid.core.negotiation.domain_rules import LAN, abstract_ports
from braid.core.negotiation.domains import global_view_from_dict
from tests.e2e.test_domain_enforcement import (
    BRIDGES,
    DOMAIN_LINKS,
    SLOW_NET,
    World,
    _leftovers,
    _meter_rates,
    _ports,
    _queue_classes,
    running_world,
)
from tests.e2e.waiting import wait_for

pytestmark = pytest.mark.e2e

M = 10**6
FIRST, SECOND = 10, 8  # seconds of each step
BUSY = 6 * M  # of w1's 12 Mbit/s core, from the cut on
VIEW = global_view_from_dict(SLOW_NET)
Held = dict[tuple[str, str], dict[int, tuple[int, int]]]


@pytest.fixture
def world(ovs: OvsSandbox, tmp_path: Path) -> Iterator[World]:
    with running_world(ovs, tmp_path) as made:
        yield made


def _busy_w1(world: World, start: int) -> None:
    """Book `BUSY` of w1's core from `start` on, as another user's hold would: w1 offers
    the volume less from then, so its profile has a step there."""
    agent = world.cluster.agent("w1")
    token = "busy-token-" * 2
    segment = pb.Segment(span=pb.Span(entry="w1-x", exit="w1-y"), bandwidth_bps=BUSY)
    prep = pb.ReservationPrep(
        transaction_id="busy-w1",
        token=token,
        window=pb.Window(start=start, end=start + 3600),
        segments=[segment],
        hold_seconds=60,
    )
    assert agent.Prepare(prep, timeout=10).yes
    agent.CommitHold(pb.Commit(transaction_id="busy-w1", token=token), timeout=10)


def _reserve_volume(world: World, rid: str, policing: str) -> pb.ReservationResp:
    not_before = int(time.time()) + 3  # within the agents' lead: the first step goes in now
    _busy_w1(world, not_before + FIRST)
    bits = 24 * M * FIRST + 18 * M * SECOND
    request = pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        volume=pb.Volume(bytes=bits // 8, not_before=not_before, deadline=not_before + 3600),
        max_paths=2,
        policing=policing,
    )
    reply = world.cluster.reserve(request)
    assert reply.success, reply.reason
    steps = [(s.start - not_before, s.end - not_before, s.rate_bps) for s in reply.volume.steps]
    assert steps == [(0, FIRST, 24 * M), (FIRST, FIRST + SECOND, 18 * M)]
    return reply


def _step_queues(step: Any, hard: bool) -> Held:
    """(domain, link) -> {VLAN: (rate, ceil)}: the queues a step's rule plan asks of every
    programmed domain, on the port of each way that leaves towards another domain."""
    wanted: Held = {}
    for plan in step.switches:
        if plan.domain not in BRIDGES:
            continue
        named = abstract_ports(VIEW, plan.domain)[plan.switch]
        for rule in plan.rules:
            for way in rule.ways:
                link = named[way.port]
                if link == LAN or way.rate == 0:
                    continue
                line = VIEW.links[link].capacity
                ceil = way.rate if hard else line
                wanted.setdefault((plan.domain, link), {})[way.vlan] = (way.rate, ceil)
    return wanted


def _held(world: World) -> Held:
    """braid's queue classes on every programmed port between domains, read back with tc."""
    held: Held = {}
    for domain in BRIDGES:
        for link in sorted(set(_ports(domain)) & DOMAIN_LINKS):
            classes = _queue_classes(world, domain, link)
            if classes:
                held[(domain, link)] = classes
    return held


def _site_meters(world: World) -> list[list[int]]:
    return [_meter_rates(world.ovs, BRIDGES[site]) for site in ("site-a", "site-b")]


def _holds_step(world: World, step: Any, hard: bool) -> bool:
    meters = [[step.rate_bps // 1000]] * 2 if hard else [[], []]
    return _held(world) == _step_queues(step, hard) and _site_meters(world) == meters


@pytest.mark.parametrize("policing", ["hard", "soft"])
def test_each_step_of_a_volume_is_held_at_its_rates_then_nothing_is_left(
    world: World, policing: str
) -> None:
    reply = _reserve_volume(world, f"v-{policing}", policing)
    hard = policing == "hard"
    first, second = reply.volume.steps
    assert all(plan.policing == policing for s in (first, second) for plan in s.switches)
    # Each step's rules on every bridge while it lasts (seen before the step ends).
    assert wait_for(lambda: _holds_step(world, first, hard), first.end - time.time()), (
        _held(world),
        _site_meters(world),
    )
    assert wait_for(lambda: _holds_step(world, second, hard), second.end - time.time()), (
        _held(world),
        _site_meters(world),
    )
    print(
        f"\n{policing}: site A's meter {_site_meters(world)[0]} kbit/s in the second step; "
        f"queues {sorted(r for q in _held(world).values() for r, _ in q.values())} bit/s"
    )
    assert wait_for(lambda: not _leftovers(world)), _leftovers(world)
    # The second step's rules have the first's keys (the edges' entry, the VLANs picked
    # again): in its lead it waited for the first to end, and no agent reported it failed.
    for domain in BRIDGES:
        log = (world.cluster.workdir / f"{domain}.log").read_text(encoding="utf-8")
        assert "clash" not in log, (domain, log[-1500:])
