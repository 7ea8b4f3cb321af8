"""Sampling installed reservations on fake switches: history, status, one audit entry."""

from __future__ import annotations

from dataclasses import replace

from braid.adapters.prometheus import PrometheusMetrics
from braid.app.delivery.reports import reservation_delivery
from braid.app.reservations.observation import Observation
from braid.core.delivery import DeliveryStatus, DeliveryTotals
from braid.core.provisioning.circuit_check import PROBE_COUNT
from braid.core.provisioning.status import Phase
from tests.unit.app.delivery.world import EVERY, START, World


def _status(world: World, rid: str) -> DeliveryStatus:
    seen = world.history.get(rid)
    assert seen is not None
    return seen.status


def test_a_reservation_carrying_its_rate_is_ok() -> None:
    world = World()
    rid = world.book()
    world.install()
    world.sampler.sample(world.clock.now)
    assert _status(world, rid) is DeliveryStatus.UNMEASURED  # one sample: no interval yet
    for _ in range(4):
        world.interval(1.0)
    assert _status(world, rid) is DeliveryStatus.OK
    seen = world.history.get(rid)
    assert seen is not None and (seen.sender, seen.receiver) == ("h1", "h2")
    found = reservation_delivery(rid, 8_000_000, seen)
    forward, reverse = found.directions
    assert forward.report.delivered_share is not None
    assert 0.99 < forward.report.delivered_share < 1.01
    assert reverse.report.status is DeliveryStatus.IDLE
    assert world.audit.entries == []


def test_nothing_is_sampled_before_the_rules_are_in() -> None:
    world = World()
    world.book()
    assert world.sampler.sample(START - 60).sampled == ()
    assert world.history.all() == {}


def test_a_broken_path_degrades_once_and_is_audited_once() -> None:
    world = World()
    rid = world.book()
    world.install()
    world.sampler.sample(world.clock.now)
    world.interval(1.2)
    links = _links(world, rid)
    for link in links:  # every path: the entry rule still counts what is sent
        world.network.set_link(link, up=False)
    world.interval(1.2)
    world.interval(1.2)
    assert _status(world, rid) is DeliveryStatus.OK  # two short intervals are not sustained
    world.interval(1.2)
    assert _status(world, rid) is DeliveryStatus.DEGRADED
    world.interval(1.2)
    assert len(world.audit.entries) == 1
    entry = world.audit.entries[0]
    assert (entry.reservation_id, entry.action) == (rid, "delivery")
    assert entry.at == START + 4 * EVERY
    assert entry.detail["direction"] == "h1 -> h2"
    assert entry.detail["delivered_mbps"] == 0
    assert entry.detail["booked_mbps"] == 8
    for link in links:
        world.network.set_link(link, up=True)
    world.interval(1.2)
    assert _status(world, rid) is DeliveryStatus.OK


def _links(world: World, rid: str) -> set[str]:
    record = world.repo.get(rid)
    assert record is not None
    return {link for a in record.allocations for link in a.path.links}


def test_a_sender_below_its_rate_is_idle() -> None:
    world = World()
    rid = world.book()
    world.install()
    world.sampler.sample(world.clock.now)
    for _ in range(3):
        world.interval(0.3)
    assert _status(world, rid) is DeliveryStatus.IDLE


def test_a_switch_that_does_not_answer_skips_the_pass_and_keeps_the_samples() -> None:
    world = World()
    rid = world.book()
    world.install()
    world.sampler.sample(world.clock.now)
    world.interval(1.0)
    world.counters.refuse["s3"] = "connection refused"
    world.clock.now += EVERY
    done = world.sampler.sample(world.clock.now)
    assert done.sampled == () and "connection refused" in done.failed[rid]
    seen = world.history.get(rid)
    assert seen is not None and len(seen.forward) == 2


def test_only_the_last_samples_are_kept_and_ended_ones_forgotten() -> None:
    world = World(keep=3)
    rid = world.book(end=START + 60)
    world.install()
    for _ in range(6):
        world.interval(1.0)
    seen = world.history.get(rid)
    assert seen is not None and len(seen.forward) == 3
    world.install(at=START + 60)  # the window ends: its rules come out
    world.sampler.sample(START + 60)
    assert world.history.get(rid) is None


def test_samples_survive_a_pass_that_repairs_the_rules() -> None:
    world = World()
    rid = world.book()
    world.install()
    world.sampler.sample(world.clock.now)
    world.interval(1.0)
    status = world.store.statuses()[rid]
    world.store.put_statuses({rid: replace(status, phase=Phase.INSTALLING)}, now=0, actor="t")
    world.clock.now += EVERY
    assert world.sampler.sample(world.clock.now).sampled == ()
    seen = world.history.get(rid)
    assert seen is not None and len(seen.forward) == 2


def test_prometheus_exports_the_counters_and_the_degraded_flag() -> None:
    world = World()
    rid = world.book()
    world.install()
    world.sampler.sample(world.clock.now)
    world.interval(1.0)
    metrics = PrometheusMetrics()
    metrics.watch_delivery(world.history)
    text = metrics.render(lambda: Observation((), {}, 0, None, 0.0, 0)).decode()
    forward = f'direction="h1->h2",reservation="{rid}"'
    assert f"braid_delivery_offered_bytes_total{{{forward}}} 5e+06" in text
    assert f"braid_delivery_delivered_bytes_total{{{forward}}} 5e+06" in text
    assert f'braid_delivery_degraded{{reservation="{rid}"}} 0.0' in text


def test_the_circuit_checks_probes_are_in_the_baseline_not_in_what_was_delivered() -> None:
    world = World(check=True)
    rid = world.book()
    world.install()
    status = world.store.statuses()[rid]
    assert status.phase is Phase.INSTALLED and status.verified  # the probes got through
    world.sampler.sample(world.clock.now)  # the first sample: after the check is recorded
    seen = world.history.get(rid)
    assert seen is not None
    record = world.repo.get(rid)
    assert record is not None
    paths = len(record.allocations)
    # The switches counted the probes at both egress rules: the baseline holds them.
    assert seen.forward[0].delivered_packets == seen.reverse[0].delivered_packets
    assert seen.forward[0].delivered_packets == PROBE_COUNT * paths
    assert seen.counted == (DeliveryTotals(), DeliveryTotals())
    world.interval(1.0)
    seen = world.history.get(rid)
    assert seen is not None
    forward, reverse = seen.counted
    assert forward.offered_bytes == forward.delivered_bytes == 5_000_000
    assert reverse.delivered_bytes == 0
    metrics = PrometheusMetrics()
    metrics.watch_delivery(world.history)
    text = metrics.render(lambda: Observation((), {}, 0, None, 0.0, 0)).decode()
    assert (
        f'braid_delivery_delivered_bytes_total{{direction="h1->h2",reservation="{rid}"}} 5e+06'
        in text
    )
    assert (
        f'braid_delivery_delivered_bytes_total{{direction="h2->h1",reservation="{rid}"}} 0.0'
        in text
    )


def test_the_count_goes_on_across_a_counter_reset() -> None:
    world = World()
    rid = world.book()
    world.install()
    world.sampler.sample(world.clock.now)
    world.interval(1.0)
    world.interval(1.0)
    world.network.switches["s3"].flow_counts.clear()  # the egress switch restarted
    world.interval(0.5)
    seen = world.history.get(rid)
    assert seen is not None and seen.forward[-1].delivered_bytes == 2_500_000
    forward, _ = seen.counted  # never down, unlike the switch's counter
    assert forward.offered_bytes == forward.delivered_bytes == 12_500_000
