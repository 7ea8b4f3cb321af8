"""A real service on a fake clock, behind the real FastAPI app, for the API tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.testclient import TestClient

from braid.adapters.api import create_app
from braid.adapters.prometheus import PrometheusMetrics
from braid.app.auth import create_token
from braid.app.ports import Filters, Repository
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings
from braid.bootstrap.serve import initial_topology
from braid.core.policy import Policy

EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "science-net.yaml"
NOW = int(datetime(2030, 1, 1, tzinfo=UTC).timestamp())
HOLD_SECONDS = 600
MAX_BODY = 64 * 1024


def iso(offset: int) -> str:
    """NOW + offset seconds, as the API writes instants."""
    return datetime.fromtimestamp(NOW + offset, UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Clock:
    """The service's clock; tests move it with `advance`."""

    now: int = NOW

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: int) -> None:
        self.now += seconds


@dataclass
class Api:
    client: TestClient
    app: FastAPI
    service: ReservationService
    repo: Repository
    clock: Clock
    tokens: dict[str, str] = field(default_factory=dict)

    def auth(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def snapshot(self) -> tuple[Any, ...]:
        """Everything the store holds that a request could change."""
        return (
            self.repo.find(Filters()),
            self.repo.audit(),
            self.repo.topology(),
            self.repo.changes_since(0)[1],
        )


def build(repo: Repository | None = None, policy: Policy | None = None) -> Api:
    """The example network, users alice and bob, operator olga; the clock at NOW."""
    store: Repository = repo if repo is not None else MemoryRepository()
    clock = Clock()
    metrics = PrometheusMetrics()  # the service's and /metrics' own, as `braid serve` has it
    service = ReservationService(
        store, clock=clock, hold_seconds=HOLD_SECONDS, policy=policy, metrics=metrics
    )
    service.start(initial_topology(EXAMPLE, None))
    app = create_app(service, Settings(max_body_bytes=MAX_BODY), metrics=metrics)
    tokens = {
        name: create_token(store, name, role, NOW)
        for name, role in (("alice", "user"), ("bob", "user"), ("olga", "operator"))
    }
    return Api(TestClient(app), app, service, store, clock, tokens)


def body(**fields: Any) -> dict[str, Any]:
    """A fixed-mode request ORNL -> NERSC for the first hour after NOW + 1h, changed by `fields`."""
    base: dict[str, Any] = {
        "src": "ORNL",
        "dst": "NERSC",
        "bandwidth": "10G",
        "start": iso(3600),
        "end": iso(7200),
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}
