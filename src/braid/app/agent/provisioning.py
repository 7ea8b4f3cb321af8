"""A domain agent programs its own switches: its committed transactions as a plan source.

A Commit brings the domain's part of the reservation's rule plan (ports
numbered as the global view does); the agent keeps it with the hold. This
source hands the provisioner every committed transaction with rules, and
rebuilds each one's rules on the domain's real switches and ports, so the
same provisioning passes as `braid serve`'s install them `lead` seconds
before the window, and take them out at its end, on abort and on release.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from braid.app.agent.service import AgentService
from braid.app.provisioning.ports import Due
from braid.core.errors import InputError
from braid.core.negotiation.domain_rules import (
    SwitchWiring,
    domain_rule_set,
    preferred_group_id,
    splits,
)
from braid.core.negotiation.holds import Hold, HoldState
from braid.core.negotiation.result_rules import SwitchPlan
from braid.core.planning.lifecycle import State
from braid.core.provisioning.schedule import Window
from braid.core.rules.labels import reservation_cookie
from braid.core.rules.model import BRAID_GROUP_IDS, RulePlan

__all__ = ["AgentPlans"]


class AgentPlans:
    """`PlanSource` over an agent's committed transactions and its switches' wiring.

    `abstract` maps each switch to what the plan's port numbers stand for (a
    link id, or the LAN), `switches` each switch to its real ports for them.
    With `enforce` False the rules only route: the plans' rates and policing
    are left aside.
    """

    def __init__(
        self,
        service: AgentService,
        switches: Mapping[str, SwitchWiring],
        abstract: Mapping[str, Mapping[int, str]],
        *,
        enforce: bool = True,
    ) -> None:
        self.service, self.switches, self.abstract = service, switches, abstract
        self.enforce = enforce
        self._groups: dict[tuple[str, str], tuple[int, ...]] = {}  # (tx, switch) -> ids

    def booked(self) -> list[Due]:
        held = self.service.committed_rules()
        live = [
            (h, [self._held(p) for p in plans])
            for h, plans in held
            if h.state is HoldState.COMMITTED
        ]
        self._groups = _group_ids(live, self.abstract)
        return [
            Due(h.transaction, Window(State.RESERVED, h.start, h.end), order)
            for order, (h, _) in enumerate(live)
        ]

    def plan(self, booking: str, now: int) -> RulePlan | None:
        plans = self.service.rules.get(booking)
        if plans is None:
            return None
        rule_sets = []
        for plan in map(self._held, plans):
            wiring = self.switches.get(plan.switch)
            if wiring is None:
                raise InputError("switches", f"the wiring has no switch {plan.switch!r}")
            abstract = self.abstract.get(plan.switch, {})
            ids = self._groups.get((booking, plan.switch)) or _preferred(booking, plan, abstract)
            rule_sets.append(domain_rule_set(plan, booking, wiring, abstract, ids))
        groups = tuple(g.group_id for rs in rule_sets for g in rs.groups)
        cookie = reservation_cookie(booking)
        return RulePlan(booking, cookie, (), None, groups, (), tuple(rule_sets))

    def _held(self, plan: SwitchPlan) -> SwitchPlan:
        """The plan as this agent installs it: without its policing when not enforcing."""
        return plan if self.enforce else dataclasses.replace(plan, policing=None)


def _preferred(transaction: str, plan: SwitchPlan, abstract: Mapping[int, str]) -> tuple[int, ...]:
    wanted = range(splits(plan, abstract))
    return tuple(preferred_group_id(transaction, plan.switch, i) for i in wanted)


def _group_ids(
    live: Sequence[tuple[Hold, Sequence[SwitchPlan]]],
    abstract: Mapping[str, Mapping[int, str]],
) -> dict[tuple[str, str], tuple[int, ...]]:
    """Group ids per transaction and switch: each its hashed place in braid's range, moved
    on past any taken on that switch by a transaction that came before it."""
    taken: dict[str, set[int]] = {}
    chosen: dict[tuple[str, str], tuple[int, ...]] = {}
    span = len(BRAID_GROUP_IDS)
    for hold, plans in live:
        for plan in plans:
            used = taken.setdefault(plan.switch, set())
            ids = []
            for wanted in _preferred(hold.transaction, plan, abstract.get(plan.switch, {})):
                group = wanted
                while group in used:
                    group = BRAID_GROUP_IDS.start + (group - BRAID_GROUP_IDS.start + 1) % span
                used.add(group)
                ids.append(group)
            chosen[(hold.transaction, plan.switch)] = tuple(ids)
    return chosen
