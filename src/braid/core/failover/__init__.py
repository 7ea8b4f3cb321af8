"""A site monitor's trigger policy: when to fail over, and when the path is good again.

Pure: the monitor feeds it probe results, throughput readings and the
outcome of its actions, each with the time they happened, and does what the
returned decisions say.
"""

from braid.core.failover.detector import (
    ActionDone,
    Decision,
    Detected,
    MonitorState,
    RateSample,
    Recovered,
    RttSample,
    Switch,
    TargetBack,
    TargetLost,
    start,
    step,
)
from braid.core.failover.rule import DetectionRule

__all__ = [
    "ActionDone",
    "Decision",
    "Detected",
    "DetectionRule",
    "MonitorState",
    "RateSample",
    "Recovered",
    "RttSample",
    "Switch",
    "TargetBack",
    "TargetLost",
    "start",
    "step",
]
