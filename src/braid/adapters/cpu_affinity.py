"""Keep a process, every thread of it, on one CPU (Linux `sched_setaffinity`).

A braid agent or orchestrator is one Python process whose gRPC threads hand
each message to one another several times over; on one CPU each hand-off is
a local switch, across CPUs it wakes the other CPU, which costs far more on a
virtual machine whose idle CPUs halt. Pinning is for the operator (or
`LocalCluster`) to choose: braid never pins on its own.
"""

from __future__ import annotations

import os

from braid.core.errors import InputError

__all__ = ["allowed_cpus", "pin_to_cpu"]


def allowed_cpus() -> list[int]:
    """The CPUs this process may run on, in order (all of them where affinity is unknown)."""
    if not hasattr(os, "sched_getaffinity"):
        return list(range(os.cpu_count() or 1))
    return sorted(os.sched_getaffinity(0))


def pin_to_cpu(cpu: int, flag: str = "--cpu") -> None:
    """Run this process's threads, those already started and those to come, on `cpu`."""
    allowed = allowed_cpus()
    if cpu not in allowed or not hasattr(os, "sched_setaffinity"):
        choices = ", ".join(map(str, allowed))
        raise InputError(flag, f"CPU {cpu} is not one this process may use ({choices})")
    os.sched_setaffinity(0, {cpu})  # this thread, and every thread it starts from now on
    for task in _threads():
        try:
            os.sched_setaffinity(task, {cpu})
        except OSError:  # a thread that ended meanwhile
            continue


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return []
