"""Provisioning: which reservations the switches should carry at a moment, and the changes
that take them there, in an order that never strands a packet."""
