"""Delivery measured while reservations run: sample their counters, keep the last few,
report rates against the booked rate, and say when one stops getting what it booked."""
