"""One pass of provisioning: read the switches, work out what they should hold, change it.

The plan source is the only truth. Each pass compiles every reservation due now
(from `lead` seconds before its start until its end) with the labels it
was given at booking, reads braid's entries back from every switch, and
applies the difference in the order of `core.provisioning.changes`. Nothing
is remembered between passes but each switch's failures (for back-off), so
a replica killed in the middle of a pass leaves nothing the next pass (its
own after a restart, or another replica's) does not put right.

Given a `CircuitChecker` (`braid serve` has one for every wiring), a reservation that
has just been installed is probed path by path (`core.provisioning.circuit_check`)
and its status keeps whether every path delivered and, if not, which hop lost
the probes; without one the check is skipped.

`RulesProvisioner` works from any `PlanSource`: `braid serve`'s reservations
(`Provisioner`, over the repository and the wiring) or a domain agent's
committed transactions (`braid.app.agent.provisioning`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from braid.app.ports import Repository
from braid.app.provisioning.ports import (
    CircuitChecker,
    Due,
    PlanSource,
    ProvisioningStore,
    SwitchError,
    SwitchTables,
)
from braid.app.provisioning.reservations import ReservationPlans, Wiring
from braid.core.errors import InputError
from braid.core.model.topology import Topology
from braid.core.provisioning.changes import table_changes
from braid.core.provisioning.schedule import next_change, wanted
from braid.core.provisioning.status import Phase, Status, backoff, settled
from braid.core.rules.model import RulePlan, RuleSet, Step, StepKind
from braid.core.rules.model import merge_rule_sets as merge

__all__ = ["LEASE", "Attempt", "PassReport", "Provisioner", "RulesProvisioner", "Wiring"]

LEASE = "provisioner"


@dataclass(frozen=True, slots=True)
class Attempt:
    """A switch this pass tried and failed: why, how many times in a row, when next."""

    error: str
    failures: int
    retry_in: int  # seconds until it is tried again (1, 2, 4 … 60)


@dataclass(frozen=True, slots=True)
class PassReport:
    leader: bool
    steps: int = 0
    errors: Mapping[str, str] = field(default_factory=dict)  # switch -> why
    changed: Mapping[str, Status] = field(default_factory=dict)
    seconds: float = 0.0
    next_change: int | None = None  # when a pass is next due, if nothing else happens
    # Only the switches tried in this pass (not those left alone, backing off):
    failed: Mapping[str, Attempt] = field(default_factory=dict)
    recovered: tuple[str, ...] = ()  # failing before this pass, answering now
    problems: Mapping[str, str] = field(default_factory=dict)  # reservation -> why not compiled


@dataclass
class _Failures:
    count: int = 0
    retry_at: int = 0
    error: str = ""


class RulesProvisioner:
    def __init__(
        self,
        source: PlanSource,
        store: ProvisioningStore,
        tables: SwitchTables,
        *,
        holder: str,
        lead: int = 5,
        lease_ttl: int = 15,
        checker: CircuitChecker | None = None,
    ) -> None:
        self.source, self.store, self.tables = source, store, tables
        self.checker = checker  # probes each reservation's paths once it is installed
        self.holder, self.lead, self.lease_ttl = holder, lead, lease_ttl
        self._failures: dict[str, _Failures] = {}
        self._resting: set[str] = set()  # switches left alone this pass (backing off)
        self._last: dict[str, RuleSet] | None = None  # what the last pass left, if it all went
        self._added: set[int] = set()  # cookies of the flows this pass added (to re-check)

    def step(self, now: int, *, reconcile: bool = True) -> PassReport:
        """One pass at `now`; a replica that does not hold the lease does nothing.

        Without `reconcile`, the switches are read only if what they should
        hold differs from what the last pass left (or a switch is failing):
        cheap enough to run every second. A reconciling pass always reads
        them, and puts right whatever changed behind braid's back.
        """
        began = time.perf_counter()
        if not self.store.acquire(LEASE, self.holder, now=now, ttl=self.lease_ttl):
            self._last = None  # another replica acts: what it leaves is unknown here
            return PassReport(leader=False)
        booked = {r.id: r for r in self.source.booked()}
        due = [r for r in booked.values() if wanted(r.window, now, self.lead)]
        plans, problems = self._plans(due, now)
        desired = merge(rs for plan in plans.values() for rs in plan.rule_sets())
        if not (reconcile or self._failures or problems) and desired == self._last:
            upcoming = self._upcoming(booked.values(), now)
            return PassReport(True, next_change=upcoming, seconds=time.perf_counter() - began)
        before = self.store.statuses()
        errors = dict(problems)
        actual = self._read(now, errors)
        self._mark_busy(booked, plans, before, now)
        steps = self._change(actual, desired, errors)
        failed, recovered = self._note_failures(errors, now)
        self._last = desired if not self._failures else None
        changed = self._settle(booked, plans, problems, errors, now)
        upcoming = self._upcoming(booked.values(), now)
        seconds = time.perf_counter() - began
        return PassReport(
            True, steps, errors, changed, seconds, upcoming, failed, recovered, problems
        )

    def _upcoming(self, booked: Iterable[Due], now: int) -> int | None:
        """When the next pass is due: a window edge, or a failing switch's retry."""
        times = [next_change((r.window for r in booked), now, self.lead)]
        times += [f.retry_at for f in self._failures.values()]
        return min((t for t in times if t is not None), default=None)

    # -- what should be there ------------------------------------------------------

    def _plans(self, due: Iterable[Due], now: int) -> tuple[dict[str, RulePlan], dict[str, str]]:
        """Compiled plans of the due reservations, oldest first; what cannot be compiled,
        or clashes with an older one, is reported by id instead. One in its lead time whose
        rules clash with those of a booking that ends by its start (a volume's next step
        in a domain, a booking back to back with the last between the same hosts) is not
        failed but waits: its rules take theirs over, in place, in the pass at its start."""
        plans: dict[str, RulePlan] = {}
        problems: dict[str, str] = {}
        compiled: dict[str, RulePlan] = {}
        ordered = sorted(due, key=lambda r: (r.created_at, r.id))
        for r in ordered:
            try:
                plan = self.source.plan(r.id, now)
            except InputError as exc:
                problems[r.id] = str(exc)
                continue
            if plan is not None:  # None: gone since it was listed
                compiled[r.id] = plan
        waiting = _followers([r for r in ordered if r.id in compiled], compiled)
        taken: dict[str, RuleSet] = {}
        for rid, plan in compiled.items():
            if rid in waiting:
                continue
            try:
                taken = _merged_or_clash(taken, plan)
            except InputError as exc:
                problems[rid] = str(exc)
                continue
            plans[rid] = plan
        return plans, problems

    # -- what is there, and the change ---------------------------------------------

    def _read(self, now: int, errors: dict[str, str]) -> dict[str, RuleSet]:
        actual: dict[str, RuleSet] = {}
        self._resting = set()
        for switch in self.tables.switches():
            failed = self._failures.get(switch)
            if failed is not None and failed.retry_at > now:
                errors[switch] = failed.error  # backing off: not tried this pass
                self._resting.add(switch)
                continue
            try:
                actual[switch] = self.tables.read(switch)
            except SwitchError as exc:
                errors[switch] = exc.message
        return actual

    def _change(
        self, actual: Mapping[str, RuleSet], desired: Mapping[str, RuleSet], errors: dict[str, str]
    ) -> int:
        self._added = set()
        reachable = {s: r for s, r in desired.items() if s in actual}
        dpids = {s: self.tables.dpid(s) for s in actual}
        done = 0
        for step in table_changes(actual, reachable, dpids).steps:
            switch = step.rule_set.switch
            if switch in errors:
                continue  # a switch that failed in this pass is left for the next
            try:
                _run(self.tables, step)
                done += 1
                if step.kind is StepKind.APPLY:
                    self._added.update(f.cookie for f in step.rule_set.flows)
            except SwitchError as exc:
                errors[switch] = exc.message
        return done

    def _note_failures(
        self, errors: Mapping[str, str], now: int
    ) -> tuple[dict[str, Attempt], tuple[str, ...]]:
        """Count each tried switch's failures in a row (for its back-off); return the
        switches tried and failed in this pass, and those answering again."""
        tried: dict[str, Attempt] = {}
        recovered: list[str] = []
        for switch in self.tables.switches():
            if switch not in errors:
                if self._failures.pop(switch, None) is not None:
                    recovered.append(switch)
            elif switch not in self._resting:
                failed = self._failures.setdefault(switch, _Failures())
                failed.count += 1
                failed.retry_at = now + backoff(failed.count)
                failed.error = errors[switch]
                tried[switch] = Attempt(failed.error, failed.count, failed.retry_at - now)
        return tried, tuple(recovered)

    # -- what operators see ----------------------------------------------------------

    def _mark_busy(
        self,
        booked: Mapping[str, Due],
        plans: Mapping[str, RulePlan],
        before: Mapping[str, Status],
        now: int,
    ) -> None:
        """Say "installing" / "removing" before touching the switches, so a pass cut
        short shows what it was doing."""
        busy: dict[str, Status] = {}
        for rid in plans:
            if not _is(before.get(rid), Phase.INSTALLED):
                busy[rid] = Status(Phase.INSTALLING, since=now)
        for rid, status in before.items():
            if rid not in plans and status.phase in (Phase.INSTALLED, Phase.INSTALLING):
                busy[rid] = Status(Phase.REMOVING, since=now)
        if busy:
            self.store.put_statuses(busy, now=now, actor=self.holder)

    def _settle(
        self,
        booked: Mapping[str, Due],
        plans: Mapping[str, RulePlan],
        problems: Mapping[str, str],
        errors: Mapping[str, str],
        now: int,
    ) -> dict[str, Status]:
        before = self.store.statuses()
        changed: dict[str, Status] = {}
        recheck: dict[str, Status] = {}  # installed before, and rules of it added since
        # Reservations not due and never provisioned have no row: they are "scheduled".
        touched = {rid for rid, s in before.items() if s.phase is not Phase.REMOVED}
        for rid in sorted(set(plans) | set(problems) | touched):
            if rid in problems:
                status = Status(Phase.FAILED, None, problems[rid], now)
            else:
                switches = self._switches_of(rid, plans, errors, now)
                status = settled(rid in plans, switches, errors, before.get(rid), now)
            if not status.same(before.get(rid)):
                changed[rid] = status
            elif rid in plans and plans[rid].cookie in self._added:
                recheck[rid] = before[rid]  # modified, or repaired: its circuit changed
        changed.update(self._checked({**changed, **recheck}, plans))
        if changed:
            self.store.put_statuses(changed, now=now, actor=self.holder)
        return changed

    def _checked(
        self, changed: Mapping[str, Status], plans: Mapping[str, RulePlan]
    ) -> dict[str, Status]:
        """The statuses of reservations just installed (or changed) with their circuit check,
        if a checker is offered."""
        new = [r for r, s in changed.items() if s.phase is Phase.INSTALLED and r in plans]
        if self.checker is None or not new:
            return {}
        try:
            results = self.checker.check([plans[r] for r in new])
        except (SwitchError, InputError) as exc:
            return {r: replace(changed[r], check=f"not checked: {exc}") for r in new}
        return {
            # A plan with nothing to probe (no host at either end) is not unverified.
            r: replace(
                changed[r], verified=result.verified if result.paths else None, check=result.text()
            )
            for r, result in zip(new, results, strict=True)
        }

    def _switches_of(
        self, rid: str, plans: Mapping[str, RulePlan], errors: Mapping[str, str], now: int
    ) -> set[str]:
        """The switches a reservation's rules are (or were) on; every failed one if unknown."""
        plan = plans.get(rid)
        if plan is None:
            try:
                plan = self.source.plan(rid, now)
            except InputError:
                plan = None
        return _switches(plan) or set(errors)


class Provisioner(RulesProvisioner):
    """`braid serve`'s provisioner: its reservations, compiled with the wiring's ports."""

    def __init__(
        self,
        repo: Repository,
        store: ProvisioningStore,
        tables: SwitchTables,
        wiring: Wiring,
        topology: Callable[[], Topology],
        *,
        holder: str,
        lead: int = 5,
        lease_ttl: int = 15,
        checker: CircuitChecker | None = None,
    ) -> None:
        source = ReservationPlans(repo, wiring, topology)
        super().__init__(
            source, store, tables, holder=holder, lead=lead, lease_ttl=lease_ttl, checker=checker
        )
        self.repo, self.wiring, self.topology = repo, wiring, topology


def _is(status: Status | None, phase: Phase) -> bool:
    return status is not None and status.phase is phase


def _switches(plan: RulePlan | None) -> set[str]:
    return set() if plan is None else {rs.switch for rs in plan.rule_sets()}


def _run(tables: SwitchTables, step: Step) -> None:
    if step.kind is StepKind.APPLY:
        tables.apply(step.rule_set)
    else:
        tables.remove(step.rule_set)


def _followers(due: Sequence[Due], plans: Mapping[str, RulePlan]) -> set[str]:
    """The bookings whose rules clash with those of another that ends by their start."""
    merged: dict[str, dict[str, RuleSet]] = {}  # each earlier booking's rules, merged once

    def rules_of(q: Due) -> dict[str, RuleSet]:
        if q.id not in merged:
            merged[q.id] = merge(plans[q.id].rule_sets())
        return merged[q.id]

    return {
        r.id
        for r in due
        for q in due
        if q.window.end <= r.window.start and _clashing(rules_of(q), plans[r.id]) is not None
    }


def _clashing(taken: Mapping[str, RuleSet], plan: RulePlan) -> str | None:
    """The switch on which a rule of `plan` has the key of another reservation's rule in
    `taken` (or a group its id), if any."""
    for rule_set in plan.rule_sets():
        held = taken.get(rule_set.switch)
        if held is None:
            continue
        mine = {f.key for f in rule_set.flows}
        theirs = [f for f in held.flows if f.key in mine and f.cookie != plan.cookie]
        groups = {g.group_id for g in held.groups} & {g.group_id for g in rule_set.groups}
        if theirs or groups:
            return rule_set.switch
    return None


def _merged_or_clash(taken: dict[str, RuleSet], plan: RulePlan) -> dict[str, RuleSet]:
    """`taken` with `plan`'s rules added; an InputError if a rule of it has the key of
    another reservation's rule (two reservations between the same hosts at once)."""
    switch = _clashing(taken, plan)
    if switch is not None:
        raise InputError(
            "hosts",
            f"its rules on {switch} clash with another reservation's "
            "(the same hosts at the same time, or a label taken twice)",
        )
    return merge([*taken.values(), *plan.rule_sets()])
