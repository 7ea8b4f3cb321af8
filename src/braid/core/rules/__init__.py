"""Allocations to abstract OpenFlow 1.3 rule sets: compiler, labels, flow hashing and pinning."""
