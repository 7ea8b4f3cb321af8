"""Rule plans (`SwitchPlan`) to and from protobuf: in results, and in a Commit to an agent."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.core.negotiation.result_rules import SwitchPlan, SwitchRule, Way
from braid.core.rules.enforcement import parse_policing

__all__ = ["WirePlans", "plan_from_pb", "plan_to_pb", "plans_from_wire"]


def plan_to_pb(plan: SwitchPlan) -> pb.SwitchPlan:
    return pb.SwitchPlan(
        domain=plan.domain,
        switch=plan.switch,
        dpid=plan.dpid,
        rules=[
            pb.SwitchRule(
                in_port=r.in_port,
                vlan=r.vlan,
                ways=[
                    pb.RuleWay(port=w.port, vlan=w.vlan, weight=w.weight, rate=w.rate)
                    for w in r.ways
                ],
            )
            for r in plan.rules
        ],
        policing="" if plan.policing is None else plan.policing.value,
    )


def plan_from_pb(message: pb.SwitchPlan) -> SwitchPlan:
    return SwitchPlan(
        message.domain,
        message.switch,
        message.dpid,
        tuple(
            SwitchRule(
                r.in_port, r.vlan, tuple(Way(w.port, w.vlan, w.weight, w.rate) for w in r.ways)
            )
            for r in message.rules
        ),
        parse_policing(message.policing, "switches.policing") if message.policing else None,
    )


def plans_from_pb(messages: Iterable[pb.SwitchPlan]) -> tuple[SwitchPlan, ...]:
    return tuple(plan_from_pb(m) for m in messages)


class WirePlans(Sequence[SwitchPlan]):
    """One domain's plans of a Commit, kept as the wire bytes they came in.

    Most agents store the plans a Commit brings and read them only if their
    southbound installs them: the plans are turned into `SwitchPlan`s the
    first time they are read, and `wire` stores them as they came.
    """

    __slots__ = ("_plans", "_size", "wire")

    def __init__(self, messages: Iterable[pb.SwitchPlan], domain: str) -> None:
        mine = [m for m in messages if m.domain == domain]
        self._size = len(mine)
        self.wire = pb.Commit(switches=mine).SerializeToString() if mine else b""
        self._plans: tuple[SwitchPlan, ...] | None = None

    def _decoded(self) -> tuple[SwitchPlan, ...]:
        if self._plans is None:
            self._plans = plans_from_wire(self.wire)
        return self._plans

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> SwitchPlan: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SwitchPlan]: ...
    def __getitem__(self, index: int | slice) -> SwitchPlan | Sequence[SwitchPlan]:
        return self._decoded()[index]

    def __iter__(self) -> Iterator[SwitchPlan]:
        return iter(self._decoded())


def plans_from_wire(wire: bytes) -> tuple[SwitchPlan, ...]:
    """The plans of `WirePlans.wire` (a Commit holding only them)."""
    return plans_from_pb(pb.Commit.FromString(wire).switches)
