"""Seed 003's impulse-response method over throughput traces (pure; times are passed in)."""

from braid.core.impulse.compare import Comparison, compare
from braid.core.impulse.response import EventResponse, ImpulseAnalysis, ImpulseSettings, analyze
from braid.core.impulse.trace import EventMarks, Trace

__all__ = [
    "Comparison",
    "EventMarks",
    "EventResponse",
    "ImpulseAnalysis",
    "ImpulseSettings",
    "Trace",
    "analyze",
    "compare",
]
