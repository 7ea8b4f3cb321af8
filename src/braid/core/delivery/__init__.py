"""Delivery measured: what a reservation's flows carried, against what was booked.

`flows` says which flows of a compiled plan count what (offered at the entry
rule, delivered at the egress rule, dropped by the entry meter); `samples`
turns their raw counters into cumulative per-direction figures; `report`
turns a series of those into rates per interval, totals and a status.
"""

from braid.core.delivery.flows import CountedDirection, FlowRef, counted_flows
from braid.core.delivery.report import (
    DeliveryInterval,
    DeliveryReport,
    DeliveryStatus,
    DeliveryTotals,
    delivery_report,
)
from braid.core.delivery.samples import DeliverySample, Tally, tally_of

__all__ = [
    "CountedDirection",
    "DeliveryInterval",
    "DeliveryReport",
    "DeliverySample",
    "DeliveryStatus",
    "DeliveryTotals",
    "FlowRef",
    "Tally",
    "counted_flows",
    "delivery_report",
    "tally_of",
]
