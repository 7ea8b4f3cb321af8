"""`braid plan` end to end: a JSONL file of mixed requests, in process and through the CLI."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from braid.core.model.topology import Topology
from workload import DAY, MAX_DURATION, MIN_DURATION, T0, WEEK, SizeModel, Tick, log_uniform

# Mostly fixed and earliest, as the issue asks; the rest exercise every path
# through the planner, including rejections (which also look up alternatives).
MIX = (
    ("fixed", 0.45),
    ("earliest", 0.30),
    ("max-bandwidth", 0.08),
    ("all-slots", 0.07),
    ("release", 0.10),
)


def make_requests(topology: Topology, sizes: SizeModel, count: int, seed: int) -> list[str]:
    """`count` request lines over one week; releases name earlier reservations."""
    rng = random.Random(f"{seed}:plan")
    nodes = sorted(topology.nodes)
    kinds = [kind for kind, _ in MIX]
    weights = [weight for _, weight in MIX]
    lines: list[str] = []
    reservable: list[str] = []
    for i in range(count):
        kind = rng.choices(kinds, weights)[0]
        if kind == "release" and reservable:
            lines.append(json.dumps({"id": rng.choice(reservable), "op": "release"}))
            continue
        kind = "fixed" if kind == "release" else kind
        request = _request(rng, f"r{i}", kind, nodes, sizes)
        if kind in ("fixed", "earliest"):
            reservable.append(request["id"])
        lines.append(json.dumps(request))
    return lines


def _request(
    rng: random.Random, rid: str, kind: str, nodes: list[str], sizes: SizeModel
) -> dict[str, Any]:
    src, dst = rng.sample(nodes, 2)
    duration = int(log_uniform(rng, MIN_DURATION, MAX_DURATION))
    start = T0 + rng.randrange(WEEK - duration)
    mbps = sizes.draw(rng, 2.0) // 1_000_000
    out: dict[str, Any] = {"id": rid, "src": src, "dst": dst, "mode": kind}
    if kind == "fixed":
        out.update(bandwidth=f"{mbps}M", start=start, end=start + duration)
        if rng.random() < 0.1:
            out["max_paths"] = rng.randint(2, 4)
    elif kind == "earliest":
        out.update(bandwidth=f"{mbps}M", duration=duration, not_before=start)
    elif kind == "max-bandwidth":
        out.update(start=start, end=start + duration, reserve=rng.random() < 0.5)
    else:
        first = T0 + rng.randrange(WEEK - DAY)
        out.update(bandwidth=f"{mbps}M", duration=3600, window_start=first, window_end=first + DAY)
    return out


def run_in_process(topology: Topology, lines: list[str], tick: Tick) -> dict[str, Any]:
    """Time every decision of `plan_lines` and its contract line, as `braid plan` makes them."""
    from braid.adapters.plan_contract import encode
    from braid.app.planning import plan_lines

    per_decision: list[int] = []
    statuses: Counter[str] = Counter()
    began = time.perf_counter_ns()
    last = began
    for decision in plan_lines(topology, lines):
        line = encode(decision)
        stamp = time.perf_counter_ns()
        per_decision.append(stamp - last)
        last = stamp
        statuses[line["status"]] += 1
        tick(1)
    total_s = (time.perf_counter_ns() - began) / 1e9
    return {
        "decisions": len(per_decision),
        "seconds": total_s,
        "decisions_per_s": len(per_decision) / total_s,
        "per_decision_ns": per_decision,
        "statuses": dict(statuses),
    }


def braid_command() -> list[str]:
    """The `braid` script beside this interpreter, else `python -m braid.cli.main`."""
    sibling = Path(sys.executable).with_name("braid")
    if sibling.is_file():
        return [str(sibling)]
    found = shutil.which("braid")
    return [found] if found else [sys.executable, "-m", "braid.cli.main"]


def run_cli(topology_file: Path, lines: list[str]) -> dict[str, Any]:
    """Wall time of the real CLI in a subprocess, start-up and imports included."""
    with tempfile.TemporaryDirectory(prefix="braid-bench-") as tmp:
        requests = Path(tmp) / "requests.jsonl"
        requests.write_text("\n".join(lines) + "\n", encoding="utf-8")
        command = [
            *braid_command(),
            "plan",
            "--topology",
            str(topology_file),
            "--default-capacity",
            "100G",
            str(requests),
        ]
        began = time.perf_counter_ns()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = (time.perf_counter_ns() - began) / 1e9
    return {
        "command": " ".join(Path(c).name if i == 0 else c for i, c in enumerate(command[:2])),
        "exit_code": done.returncode,
        "stderr_tail": done.stderr.decode(errors="replace")[-400:],
        "seconds": seconds,
        "decisions_per_s": len(lines) / seconds,
    }
