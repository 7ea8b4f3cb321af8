"""Multi-domain rates and policing in a Commit's switch plans, encoded and decoded."""

from __future__ import annotations

import dataclasses

from braid.adapters.rpc.switch_plans import plan_from_pb, plan_to_pb
from braid.core.negotiation.domains import GlobalView
from braid.core.rules.enforcement import Policing
from tests.unit.core.negotiation.test_way_rates import RN1, rated, view

__all__ = ["view"]  # the fixture, shared


def test_rates_and_policing_cross_the_wire_to_the_agent(view: GlobalView) -> None:
    for plan in rated(view, Policing.HARD).values():
        assert plan_from_pb(plan_to_pb(plan)) == plan
    unrated = dataclasses.replace(rated(view)[RN1], policing=None)
    assert plan_from_pb(plan_to_pb(unrated)).policing is None
