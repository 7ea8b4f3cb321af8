"""Figures of seed 003's impulse-response method."""
