"""The monitor's loop: probe, throughput reader, trigger policy, action, log, metrics.

The policy (`braid.core.failover`) decides; this module only carries samples
to it and does what it says. Probes and readings arrive from their own
threads through one queue, so the policy sees one ordered stream; the
action runs on the main thread and its outcome is fed back.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from braid.adapters.failover.actions import ActionOutcome
from braid.adapters.failover.counters import InterfaceRate
from braid.adapters.failover.eventlog import EventLog
from braid.adapters.failover.metrics import MonitorMetrics
from braid.adapters.failover.probe import ProbeResult, UdpRttProbe
from braid.core.failover import (
    ActionDone,
    Decision,
    Detected,
    DetectionRule,
    RateSample,
    Recovered,
    RttSample,
    Switch,
    TargetBack,
    TargetLost,
    start,
    step,
)

__all__ = ["MonitorConfig", "MonitorSummary", "run_monitor"]

Action = Callable[[str], ActionOutcome]


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    target: str
    port: int
    rule: DetectionRule
    rate_hz: float = 10.0
    timeout: float = 1.0
    netns: str | None = None
    interface: str | None = None  # throughput from its byte counters
    direction: str = "rx"
    rate_interval: float = 0.5
    log: Path | None = None
    log_probes: bool = True
    duration: float | None = None
    early: bool = True  # a probe unanswered at the threshold counts as over it at once


@dataclass(slots=True)
class MonitorSummary:
    probes: int = 0
    lost: int = 0
    detections: int = 0
    actions: list[ActionOutcome] = field(default_factory=list)
    recovered: int = 0
    target_lost: int = 0


def run_monitor(
    config: MonitorConfig,
    action: Action | None,
    stop: threading.Event,
    say: Callable[[str], None] = lambda _: None,
    metrics: MonitorMetrics | None = None,
    log: EventLog | None = None,
) -> MonitorSummary:
    """Run until `stop` is set or `config.duration` has passed; return what happened."""
    state = start(config.rule)
    own_log = log is None
    log = EventLog(config.log, config.log_probes) if log is None else log
    metrics = metrics or MonitorMetrics()
    metrics.path.labels(state.path).set(1)
    samples: queue.Queue[RttSample | RateSample] = queue.Queue()
    summary = MonitorSummary()
    log.write(time.time(), "start", target=f"{config.target}:{config.port}", path=state.path)
    workers = _start_workers(config, samples, stop, log, metrics, summary)
    deadline = None if config.duration is None else time.monotonic() + config.duration
    try:
        while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
            try:
                sample = samples.get(timeout=0.1)
            except queue.Empty:
                continue
            state, decisions = step(state, config.rule, sample)
            for decision in decisions:
                done = _carry_out(decision, action, log, metrics, summary, say)
                if done is not None:
                    state, _ = step(state, config.rule, done)
                    _switched(metrics, config.rule, done)
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=2.0)
        log.write(time.time(), "stop")
        if own_log:
            log.close()
    return summary


def _start_workers(
    config: MonitorConfig,
    samples: queue.Queue[RttSample | RateSample],
    stop: threading.Event,
    log: EventLog,
    metrics: MonitorMetrics,
    summary: MonitorSummary,
) -> list[threading.Thread]:
    probe = UdpRttProbe(
        config.target, config.port, config.rate_hz, config.timeout, config.netns,
        late_after=config.rule.rtt_threshold_ms / 1000 if config.early else None,
    )  # fmt: skip
    warned: set[str] = set()

    def report(result: ProbeResult) -> None:
        summary.probes += 1
        summary.lost += result.rtt_ms is None
        kind = "late" if result.late else "answered" if result.rtt_ms is not None else "lost"
        metrics.probes.labels(kind).inc()
        if kind == "answered" and result.rtt_ms is not None:
            metrics.rtt.set(result.rtt_ms)
        fields: dict[str, object] = {"sent": round(result.sent, 6), "rtt_ms": result.rtt_ms}
        if result.late:
            fields["late"] = True
        if result.error is not None:
            fields["error"] = result.error
            if result.error not in warned:  # say it once per cause, keep probing
                warned.add(result.error)
                log.write(result.known, "probe-error", error=result.error)
        log.write(result.known, "probe", **fields)
        samples.put(RttSample(result.known, result.sent, result.rtt_ms, result.late))

    threads = [threading.Thread(target=probe.run, args=(report, stop), daemon=True)]
    if config.interface is not None:
        reader = InterfaceRate(config.interface, config.direction)

        def read_rates() -> None:
            while not stop.wait(config.rate_interval):
                bps = reader.read()
                if bps is not None:
                    metrics.rate.set(bps)
                    now = time.time()
                    log.write(now, "rate", bps=round(bps, 1))
                    samples.put(RateSample(now, bps))

        threads.append(threading.Thread(target=read_rates, daemon=True))
    for thread in threads:
        thread.start()
    return threads


def _carry_out(
    decision: Decision,
    action: Action | None,
    log: EventLog,
    metrics: MonitorMetrics,
    summary: MonitorSummary,
    say: Callable[[str], None],
) -> ActionDone | None:
    if isinstance(decision, Detected):
        summary.detections += 1
        metrics.detections.labels(decision.reason).inc()
        log.write(decision.t, "detect", reason=decision.reason, value=decision.value)
        say(f"degraded ({decision.reason} {decision.value:g})")
    elif isinstance(decision, Recovered):
        summary.recovered += 1
        log.write(decision.t, "recovered", path=decision.path)
        say(f"recovered on {decision.path}")
    elif isinstance(decision, TargetLost):
        summary.target_lost += 1
        metrics.target_lost.set(1)
        log.write(decision.t, "target-lost", silent_s=round(decision.silent_s, 3))
        say(f"probe target lost: no answer for {decision.silent_s:.1f} s; still probing")
    elif isinstance(decision, TargetBack):
        metrics.target_lost.set(0)
        log.write(decision.t, "target-back")
        say("probe target answers again")
    elif isinstance(decision, Switch):
        return _switch(decision, action, log, metrics, summary, say)
    return None


def _switch(
    decision: Switch,
    action: Action | None,
    log: EventLog,
    metrics: MonitorMetrics,
    summary: MonitorSummary,
    say: Callable[[str], None],
) -> ActionDone:
    if action is None:  # watching only: the switch is what the operator would do
        outcome = ActionOutcome(decision.to, decision.t, decision.t, True, "no action configured")
    else:
        outcome = action(decision.to)
    summary.actions.append(outcome)
    metrics.actions.labels(outcome.to, str(outcome.ok).lower()).inc()
    metrics.action_seconds.observe(max(0.0, outcome.done - decision.t))
    log.write(
        outcome.began, "action", to=outcome.to, ok=outcome.ok, done=round(outcome.done, 6),
        error=outcome.error,
    )  # fmt: skip
    say(f"switched to {outcome.to}" if outcome.ok else f"switch to {outcome.to} failed: "
        f"{outcome.error}")  # fmt: skip
    return ActionDone(outcome.done, outcome.to, outcome.ok)


def _switched(metrics: MonitorMetrics, rule: DetectionRule, done: ActionDone) -> None:
    if done.ok:
        for name in rule.paths:
            metrics.path.labels(name).set(1 if name == done.to else 0)
