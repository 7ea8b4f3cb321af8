"""Simulation studies run by `braid sim`."""
