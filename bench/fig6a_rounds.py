"""What the cancel and modify benches share: rounds of interdomain calls on a fresh
Fig. 6a cluster (nine agents as processes), warmed up first, with every agent's
ledger checked afterwards."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from braid.adapters.rpc.ledgers import LedgerCheck, check_ledgers
from braid.bootstrap.local_cluster import LocalCluster

FIG6A = Path(__file__).resolve().parents[1] / "src" / "braid" / "examples" / "fig6a.yaml"
WARM_UP_ROUNDS = 5  # the gRPC channels and the processes' first calls

T = TypeVar("T")
Rounds = Callable[[LocalCluster, int, str], T]


def on_fig6a(rounds: Rounds[T], count: int, tag: str) -> tuple[T, LedgerCheck]:
    """`rounds(cluster, count, tag)` after a warm-up, and the ledgers afterwards."""
    with (
        tempfile.TemporaryDirectory() as folder,
        LocalCluster(FIG6A, Path(folder) / "run") as cluster,
    ):
        rounds(cluster, WARM_UP_ROUNDS, "warm")
        measured = rounds(cluster, count, tag)
        return measured, check_ledgers(cluster.reports(), {})


def p99(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.99) - 1)]
