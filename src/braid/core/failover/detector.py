"""The monitor's state machine: samples in, decisions out, time always passed in.

    watching ──degraded──▶ (Detected, Switch) ──ActionDone──▶ failed over
    failed over ──recover_samples good probes──▶ Recovered ──▶ watching
    failed over ──still degraded retry_s after the switch──▶ (Detected, Switch)
    any ──no answer for lost_after_s──▶ TargetLost ──an answer──▶ TargetBack

While the target is lost or a switch is under way nothing else fires, so a
dead far end makes one fail-over, not a flapping pair of sites.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from braid.core.failover.rule import DetectionRule

__all__ = [
    "ActionDone",
    "Decision",
    "Detected",
    "MonitorState",
    "RateSample",
    "Recovered",
    "RttSample",
    "Switch",
    "TargetBack",
    "TargetLost",
    "start",
    "step",
]


@dataclass(frozen=True, slots=True)
class RttSample:
    """A probe sent at `sent`, answered after `rtt_ms` (None: no answer), known at `t`.

    `late`: not answered yet after `rtt_ms` (a lower bound, above the
    threshold); over the threshold for sure, but no sign of life.
    """

    t: float
    sent: float
    rtt_ms: float | None
    late: bool = False


@dataclass(frozen=True, slots=True)
class RateSample:
    t: float
    bps: float


@dataclass(frozen=True, slots=True)
class ActionDone:
    t: float
    to: str
    ok: bool


@dataclass(frozen=True, slots=True)
class Detected:
    t: float
    reason: str  # "rtt", "loss" or "throughput"
    value: float  # the measure that crossed: ms, percent or bit/s


@dataclass(frozen=True, slots=True)
class Switch:
    t: float
    to: str


@dataclass(frozen=True, slots=True)
class Recovered:
    t: float
    path: str


@dataclass(frozen=True, slots=True)
class TargetLost:
    t: float
    silent_s: float


@dataclass(frozen=True, slots=True)
class TargetBack:
    t: float


Decision = Detected | Switch | Recovered | TargetLost | TargetBack
Sample = RttSample | RateSample | ActionDone


@dataclass(frozen=True, slots=True)
class MonitorState:
    path: str  # where the monitor last put its traffic
    phase: str = "watching"  # "watching", "switching" or "failed-over"
    over: int = 0  # consecutive probes over the threshold
    good: int = 0  # consecutive good probes
    low: int = 0  # consecutive throughput readings under the floor
    recent: tuple[bool, ...] = ()  # lost or not, last `loss_window` probes
    answered_at: float | None = None  # last answer; None: never answered yet
    first_at: float | None = None  # first probe's result: silence is counted from it at start
    lost: bool = False
    ignore_before: float = float("-inf")  # probes sent before this say nothing new
    rate_seen: bool = False  # the floor only counts once the rate was above it


def start(rule: DetectionRule) -> MonitorState:
    rule.check()
    return MonitorState(path=rule.paths[0])


def step(
    state: MonitorState, rule: DetectionRule, sample: Sample
) -> tuple[MonitorState, tuple[Decision, ...]]:
    if isinstance(sample, ActionDone):
        return _action_done(state, rule, sample)
    if isinstance(sample, RateSample):
        return _rate(state, rule, sample)
    return _probe(state, rule, sample)


def _action_done(
    state: MonitorState, rule: DetectionRule, done: ActionDone
) -> tuple[MonitorState, tuple[Decision, ...]]:
    if not done.ok:  # the rules did not go in: watch again, a later probe may retry
        return replace(state, phase="watching", over=0, low=0), ()
    fresh = replace(state, path=done.to, phase="failed-over", over=0, good=0, low=0, recent=())
    return replace(fresh, ignore_before=done.t + rule.hold_down_s), ()


def _rate(
    state: MonitorState, rule: DetectionRule, sample: RateSample
) -> tuple[MonitorState, tuple[Decision, ...]]:
    floor = rule.throughput_floor_bps
    if floor is None or sample.t < state.ignore_before:
        return state, ()
    if sample.bps >= floor:
        return replace(state, low=0, rate_seen=True), ()
    state = replace(state, low=state.low + 1)
    if state.rate_seen and state.low >= rule.throughput_samples:
        return _fire(state, rule, Detected(sample.t, "throughput", sample.bps))
    return state, ()


def _probe(
    state: MonitorState, rule: DetectionRule, sample: RttSample
) -> tuple[MonitorState, tuple[Decision, ...]]:
    decisions: list[Decision] = []
    answered = sample.rtt_ms is not None and not sample.late
    if state.first_at is None:
        state = replace(state, first_at=sample.t)
    if answered:
        if state.lost:
            decisions.append(TargetBack(sample.t))
        state = replace(state, answered_at=sample.t, lost=False)
    elif not state.lost:
        since = state.answered_at if state.answered_at is not None else state.first_at
        silent = sample.t - (sample.t if since is None else since)
        if silent >= rule.lost_after_s:
            state = replace(state, lost=True)
            decisions.append(TargetLost(sample.t, silent))
    if sample.sent < state.ignore_before or state.answered_at is None:
        return state, tuple(decisions)
    bad = not answered or (sample.rtt_ms or 0.0) > rule.rtt_threshold_ms
    recent = (*state.recent, not answered)[-rule.loss_window :]
    state = replace(
        state, recent=recent, over=state.over + 1 if bad else 0, good=0 if bad else state.good + 1
    )
    if state.phase == "failed-over":
        if state.good >= rule.recover_samples:
            state = replace(state, phase="watching", good=0)
            decisions.append(Recovered(sample.t, state.path))
        elif sample.sent >= state.ignore_before + rule.retry_s:
            # Still degraded long after the switch: the switch did not help (or came
            # before the degradation it should have answered): judge it afresh.
            state, fired = _judge(replace(state, phase="watching"), rule, sample)
            if not fired:
                state = replace(state, phase="failed-over")
            decisions.extend(fired)
        return state, tuple(decisions)
    state, fired = _judge(state, rule, sample)
    return state, (*decisions, *fired)


def _judge(
    state: MonitorState, rule: DetectionRule, sample: RttSample
) -> tuple[MonitorState, tuple[Decision, ...]]:
    if state.lost or state.phase != "watching":
        return state, ()
    if state.over >= rule.rtt_samples:
        value = -1.0 if sample.rtt_ms is None else sample.rtt_ms
        return _fire(state, rule, Detected(sample.t, "rtt", value))
    lost = 100.0 * sum(state.recent) / rule.loss_window
    full = len(state.recent) >= rule.loss_window
    if rule.loss_percent is not None and full and lost >= rule.loss_percent:
        return _fire(state, rule, Detected(sample.t, "loss", lost))
    return state, ()


def _fire(
    state: MonitorState, rule: DetectionRule, detected: Detected
) -> tuple[MonitorState, tuple[Decision, ...]]:
    if state.phase != "watching" or state.lost:
        return state, ()
    if rule.alternate:
        target = rule.paths[(rule.paths.index(state.path) + 1) % len(rule.paths)]
    else:
        target = rule.paths[1]
    switching = replace(state, phase="switching", over=0, low=0)
    return switching, (detected, Switch(detected.t, target))
