"""Simulations run by `braid sim` (services over the pure studies in braid.core)."""
