"""The four UltraScience-Net queries, each exact over the bookings' breakpoints."""

from braid.core.schedule.all_slots import all_slots
from braid.core.schedule.earliest import earliest_start
from braid.core.schedule.fixed import fixed_path
from braid.core.schedule.max_bandwidth import widest

__all__ = ["all_slots", "earliest_start", "fixed_path", "widest"]
