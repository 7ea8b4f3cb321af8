"""Allocations to abstract OpenFlow 1.3 rule sets, and a fake switch to check them."""
