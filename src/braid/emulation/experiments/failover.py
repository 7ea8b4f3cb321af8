"""`braid emulate failover`: seed 003's fail-over study on two emulated sites.

A train of n degradations, T seconds apart, hits a CUBIC iperf3 flow from
site A to site B: **path switching** (the traffic is moved onto the long
path at both sites, as the seed's dpctl degradation did; each site's
monitor then moves it back) or **RTT extension** (the primary's link
emulator gets slower; the monitors move to the standby; half a period
later the delay is restored and both sites are put back on the primary). Each method
(`direct`: ovs-ofctl; `controller`: the site's braid controller) runs the
same train. A **cut** silences the primary in the middle of the long haul
(its link emulator drops every frame; no port goes down): the monitors move
to the standby, or, with no monitor, a fast-failover group does (`ff`: it
cannot see the cut; `ff-bfd`: BFD across the long haul can). A 1 kHz UDP
probe stream tells, packet by packet, when traffic left the slow or cut
path; the throughput trace gives the impulse responses. Then a
fast-failover group is timed on a link going down.
"""

from __future__ import annotations

import json
import random
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

import numpy as np

from braid.adapters.dataplane import LinkEmulator, LinkSettings
from braid.adapters.emulation.bfd import BfdSettings
from braid.adapters.emulation.iperf import ClientOptions, IperfServer, run_client
from braid.adapters.emulation.probe import ProbeRun
from braid.adapters.failover.eventlog import EventLog
from braid.adapters.failover.files import read_events
from braid.adapters.southbound.direct import OfctlDriver
from braid.core.errors import InputError
from braid.core.failover import DetectionRule
from braid.core.impulse import ImpulseSettings, Trace, analyze
from braid.core.rules.model import RulePlan
from braid.emulation.failover.config import (
    DELAYS,
    EXTENDED_MS,
    MOVE_WINDOW,
    SPLIT_MS,
    THRESHOLD_MS,
    Config,
    ConfigResult,
    FailoverOptions,
)
from braid.emulation.failover.groups import (
    GROUP_METHODS,
    bfd_off,
    bfd_on,
    compile_group,
    link_down_outage,
    wait_bfd_up,
)
from braid.emulation.failover.lab import (
    HOSTS,
    compile_paths,
    echoes,
    failover_topology,
    install_all,
    make_sites,
    path_emulators,
    short_queues,
    site_rules,
)
from braid.emulation.failover.measure import moved_back, moved_early, through_after
from braid.emulation.failover.report import failover_report
from braid.emulation.report import Progress, Report, Silent, host_load_note
from braid.emulation.session import EmulationSession
from braid.emulation.traffic import RateSampler

MBPS: Final = 1_000_000
PATH_BPS: Final = 100 * MBPS  # before scaling
METHODS: Final = ("direct", "controller", *GROUP_METHODS)
DEGRADATIONS: Final = tuple(DELAYS)
LEAD_IN: Final = 1.5  # seconds of TCP before the first degradation (its window: 1 s)
PROBE_PORT: Final = 7001
BFD_SETTLE: Final = 2.0  # seconds for BFD sessions that are up to reach their interval


def configurations(options: FailoverOptions) -> list[Config]:
    """Monitors meet every degradation; groups only the cut (they cannot see a slower path)."""
    runs = [
        Config(m, d)
        for d in options.degradations
        for m in options.methods
        if m not in GROUP_METHODS or d == "cut"
    ]
    if "direct" in options.methods:
        runs += [Config("direct", "path-switch", n) for n in options.extra if n > 0]
    return runs


def check_options(options: FailoverOptions) -> None:
    """Refuse what cannot run, naming the option; nothing has started yet."""
    try:
        BfdSettings(options.bfd_ms, options.bfd_ms)
    except InputError as exc:
        raise InputError("--bfd-interval", exc.message) from None
    groups = [m for m in options.methods if m in GROUP_METHODS]
    if groups and "cut" not in options.degradations:
        raise InputError(
            "--methods",
            f"{', '.join(groups)} only meet the cut (a group cannot see a slower path): "
            "add cut to --degradations",
        )


def run_failover(options: FailoverOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    check_options(options)
    rate = int(PATH_BPS * options.scale)
    needs_controller = "controller" in options.methods
    session_options = replace(
        options.session, driver="controller" if needs_controller else "direct"
    )
    configs = configurations(options)
    progress.start(len(configs) + options.fast_failover, "failover")
    results: list[ConfigResult] = []
    outage: float | None = None
    first = DELAYS[configs[0].degradation] if configs else DELAYS["path-switch"]
    with (
        EmulationSession(failover_topology(rate, first), HOSTS, session_options) as session,
        tempfile.TemporaryDirectory(prefix="braid-failover-") as tmp,
    ):
        short_queues(session)
        plans = compile_paths(session, rate)
        harness = OfctlDriver(dict(session.net.bridges))
        install_all(harness, plans, "primary")
        lab = _Lab(session, plans, compile_group(session, plans, rate), harness,
                   path_emulators(session))  # fmt: skip
        with echoes(session), _iperf_server(session):
            for config in configs:
                progress.step(config.label)
                work = Path(tmp) / f"run{len(results)}"
                work.mkdir()
                results.append(_run(lab, config, options, work))
            if options.fast_failover:
                progress.step("fast-failover group")
                _reset(lab, "path-switch")
                outage = link_down_outage(session, harness, lab.group, Path(tmp), PROBE_PORT)
        notes = [session.datapath_note()]
    return failover_report(results, outage, options, [*notes, host_load_note()])


class _iperf_server:  # noqa: N801 - used as a context manager, like contextlib's
    def __init__(self, session: EmulationSession) -> None:
        self.server = IperfServer(session.net.host("h2"))

    def __enter__(self) -> IperfServer:
        return self.server

    def __exit__(self, *_: object) -> None:
        self.server.close()


@dataclass(frozen=True)
class _Lab:
    """What every configuration runs on: the network, both paths' plans, the group's plan."""

    session: EmulationSession
    plans: Mapping[str, RulePlan]
    group: RulePlan  # the primary with the standby behind it in fast-failover groups
    harness: OfctlDriver  # the run's own writer (degradations, resets)
    emulators: Mapping[str, LinkEmulator]


def _reset(lab: _Lab, degradation: str, method: str = "direct") -> None:
    for name, emulator in lab.emulators.items():
        emulator.restore()
        emulator.set(LinkSettings(delay_ms=DELAYS[degradation][name]))
    if method in GROUP_METHODS:
        install_all(lab.harness, {"ff": lab.group}, "ff")
        return
    for site in ("A", "B"):
        lab.harness.apply(site_rules(lab.plans, site)["primary"])


def _rule(config: Config, options: FailoverOptions) -> DetectionRule:
    switching = config.degradation == "path-switch"
    return DetectionRule(
        rtt_threshold_ms=THRESHOLD_MS,
        rtt_samples=options.samples,
        recover_samples=5,
        hold_down_s=0.3,
        lost_after_s=3.0,
        # Path switching: the fail-over goes back to the primary (the seed's set-up); RTT
        # extension and cut: to the standby, and the run puts both sites back when the path
        # is restored. Fixed targets keep the sites together: sites that each flip to "the
        # other path" drift apart after a single detection one of them makes alone.
        paths=("standby", "primary") if switching else ("primary", "standby"),
    )


def _run(lab: _Lab, config: Config, options: FailoverOptions, work: Path) -> ConfigResult:
    session = lab.session
    _reset(lab, config.degradation, config.method)
    if config.method == "controller":
        # The controller reconciles a switch that reconnects to what it was given: give it
        # everything, or it deletes the forwarding that ovs-ofctl put in.
        install_all(session.live_driver, lab.plans, "primary")
    # Until the last event's response window is over (it starts a second before the event).
    duration = LEAD_IN + options.events * options.period - 0.4
    sites = {}
    if config.method not in GROUP_METHODS:
        rule = _rule(config, options)
        sites = make_sites(session, lab.plans, config.method, rule, work, config.extra,
                           options.rate_hz)  # fmt: skip
    if config.method == "ff-bfd":
        bfd_on(session, BfdSettings(options.bfd_ms, options.bfd_ms))
        wait_bfd_up(session)
        time.sleep(BFD_SETTLE)  # up, the sessions move from 1 s to their own interval
    h1, h2 = session.net.host("h1"), session.net.host("h2")
    probe = ProbeRun(h1, h2, session.net.ip("h2"), port=PROBE_PORT, rate=1000,
                     seconds=duration, workdir=work)  # fmt: skip
    client = threading.Thread(
        target=run_client,
        args=(h1, session.net.ip("h2"), ClientOptions(seconds=duration, omit=0)),
        daemon=True,
    )
    marks = EventLog(work / "degradations.jsonl")
    try:
        with RateSampler(session) as sampler:
            client.start()
            for site in sites.values():
                site.start()
            t0 = time.time()
            events = _train(lab, config, options, t0, [marks, *(s.log for s in sites.values())])
            _sleep_until(t0 + duration)
            summaries = {name: site.finish() for name, site in sites.items()}
    finally:
        marks.close()
        for site in sites.values():
            site.finish()
        client.join(timeout=duration + 30)
        if config.method == "ff-bfd":
            bfd_off(session)
    trace = probe.finish()
    result = _result(config, options, t0, events, sampler, sites, summaries, trace, work)
    result.forwarded = _forwarded(lab.emulators)
    return result


def _forwarded(emulators: Mapping[str, LinkEmulator]) -> dict[str, int | None]:
    """Frames each path's emulator forwarded so far (None: it died; the run is suspect)."""
    counts: dict[str, int | None] = {}
    for name, emulator in emulators.items():
        try:
            counts[name] = sum(c.forwarded for c in emulator.counters().values())
        except Exception:
            counts[name] = None
    return counts


def _train(
    lab: _Lab, config: Config, options: FailoverOptions, t0: float, logs: Sequence[EventLog]
) -> list[float]:
    events = []
    # A random phase against the probes' clock: else every event would meet the probes
    # at the same point of their interval, and the detection times would all be alike.
    phase = random.Random(options.seed)
    primary = lab.emulators["primary"]
    for i in range(options.events):
        _sleep_until(t0 + LEAD_IN + i * options.period + phase.uniform(0, 1 / options.rate_hz))
        now = time.time()
        if config.degradation == "cut":
            primary.cut()
        for log in logs:
            log.write(now, "degrade", how=config.degradation)
        events.append(now)
        if config.degradation == "path-switch":
            for name in ("A", "B"):
                lab.harness.apply(site_rules(lab.plans, name)["standby"])
            continue
        if config.degradation == "rtt-extension":
            primary.set(LinkSettings(delay_ms=EXTENDED_MS))
        _sleep_until(now + options.period / 2)
        if config.degradation == "cut":
            primary.restore()  # a group goes back by itself once its port is live again
        else:
            primary.set(LinkSettings(delay_ms=DELAYS[config.degradation]["primary"]))
        if config.method not in GROUP_METHODS:
            # the seed: "after the fail-over, the original rtt is restored"
            for name in ("A", "B"):
                lab.harness.apply(site_rules(lab.plans, name)["primary"])
    return events


def _sleep_until(at: float) -> None:
    time.sleep(max(0.0, at - time.time()))


def _result(
    config: Config,
    options: FailoverOptions,
    t0: float,
    events: list[float],
    sampler: RateSampler,
    sites: Mapping[str, Any],
    summaries: Mapping[str, Any],
    probe_trace: Any,
    work: Path,
) -> ConfigResult:
    trace = Trace.of(sampler.times, sampler.rates, field="throughput")
    marks = read_events(sites["A"].log_path if sites else work / "degradations.jsonl")
    settings = ImpulseSettings(period=options.period, step=sampler.step, lead=1.0, pre=1.0)
    analysis = analyze(trace, marks, settings, np.random.default_rng(options.seed))
    rules_ms = [
        1000 * (m.switched - m.detected)
        for site in sites.values()
        for m in read_events(site.log_path)
        if m.detected is not None and m.switched is not None
    ]
    if config.degradation == "cut":  # nothing crosses a cut path: the first arrival moved
        moved = through_after(probe_trace, events, MOVE_WINDOW)
    else:
        moved = moved_back(probe_trace, events, SPLIT_MS, MOVE_WINDOW)
    early = [False] * len(events)
    if config.degradation != "path-switch":
        early = moved_early(_action_times(sites), events, options.period / 2)
    return ConfigResult(
        config=config,
        t0=t0,
        events=events,
        trace=trace,
        analysis=analysis,
        rules_ms=rules_ms,
        moved_s=moved,
        actions={name: len(s.actions) for name, s in summaries.items()},
        lost_probes=sum(s.lost for s in summaries.values()),
        log=_events_of(sites, t0),
        early=early,
    )


def _action_times(sites: Mapping[str, Any]) -> list[float]:
    """When each site's successful fail-overs were decided (wall clock)."""
    times = []
    for site in sites.values():
        for line in site.log_path.read_text().splitlines():
            record = json.loads(line)
            if record["kind"] == "action" and record.get("ok"):
                times.append(float(record["t"]))
    return times


def _events_of(sites: Mapping[str, Any], t0: float) -> list[dict[str, Any]]:
    records = []
    for name, site in sites.items():
        for line in site.log_path.read_text().splitlines():
            record = json.loads(line)
            if record["kind"] not in ("probe", "rate"):
                records.append({**record, "site": name, "t": round(record["t"] - t0, 4)})
    return sorted(records, key=lambda r: float(r["t"]))
