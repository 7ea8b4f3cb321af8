"""The service benchmark's clients: keep-alive HTTP POSTs, one thread each, and in process.

The HTTP client is the standard library's `http.client` on one keep-alive
connection per thread: it costs a fraction of a general client's CPU per
request, which matters when the clients share 2 cores with the servers and
PostgreSQL. `client_capacity` says how many requests per second these
clients can issue at all, against a route that does nothing.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from braid.adapters.store import open_repository
from braid.app.errors import RejectedError
from braid.app.ports import ConflictError
from braid.app.records import User
from braid.app.reservations.commands import Reserve
from braid.app.reservations.service import ReservationService
from service_servers import Server, cpu_per_post_ms, cpu_snapshot
from service_store import Body, Tick


@dataclass
class Answers:
    """(status, seconds) of each POST, and the wall time of the whole run."""

    results: list[tuple[int, float]] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_ms_per_post: dict[str, float] = field(default_factory=dict)


class Connection:
    """One keep-alive HTTP/1.1 connection (reopened by `http.client` if the server closes it)."""

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        self._http = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        self._headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def send(self, method: str, path: str, body: Body | None = None) -> int:
        payload = None if body is None else json.dumps(body).encode()
        self._http.request(method, path, body=payload, headers=self._headers)
        response = self._http.getresponse()
        response.read()
        return response.status

    def close(self) -> None:
        self._http.close()


# What a client thread asks: POST a reservation, or (to measure the clients
# themselves) GET /healthz, which reads one integer from the store.
Send = Callable[[Connection, Body], int]


def post_reservation(connection: Connection, body: Body) -> int:
    return connection.send("POST", "/v1/reservations", body)


def get_health(connection: Connection, _: Body) -> int:
    return connection.send("GET", "/healthz")


def post_all(
    url: str, token: str, posts: list[Body], tick: Tick, send: Send = post_reservation
) -> list[tuple[int, float]]:
    """Send each body in turn on one keep-alive connection; (status, seconds) each."""
    out = []
    connection = Connection(url, token)
    try:
        for body in posts:
            began = time.perf_counter()
            status = send(connection, body)
            out.append((status, time.perf_counter() - began))
            tick(1)
    finally:
        connection.close()
    return out


def single_client(
    server: Server, token: str, warm: list[Body], posts: list[Body], tick: Tick
) -> Answers:
    post_all(server.url, token, warm, lambda _: None)
    before, began = cpu_snapshot([server.process.pid]), time.perf_counter()
    results = post_all(server.url, token, posts, tick)
    wall = time.perf_counter() - began
    cpu = cpu_per_post_ms(before, cpu_snapshot([server.process.pid]), len(results))
    return Answers(results, wall, cpu)


def many_clients(
    servers: list[Server],
    token: str,
    work: list[list[Body]],
    tick: Tick,
    send: Send = post_reservation,
) -> Answers:
    """One thread per body list, on the replicas in turn, all let go at once."""
    urls, pids = [s.url for s in servers], [s.process.pid for s in servers]
    go = threading.Barrier(len(work) + 1)
    lock = threading.Lock()

    def tick_safely(n: int) -> None:
        with lock:
            tick(n)

    def client(n: int) -> list[tuple[int, float]]:
        go.wait()
        return post_all(urls[n % len(urls)], token, work[n], tick_safely, send)

    with ThreadPoolExecutor(len(work)) as pool:
        futures = [pool.submit(client, n) for n in range(len(work))]
        before = cpu_snapshot(pids)
        go.wait()
        began = time.perf_counter()
        results = [r for f in futures for r in f.result()]
    wall = time.perf_counter() - began
    return Answers(results, wall, cpu_per_post_ms(before, cpu_snapshot(pids), len(results)))


def client_capacity(servers: list[Server], token: str, threads: int, each: int) -> Answers:
    """The same client threads against GET /healthz: requests/s the clients can issue at all."""
    work: list[list[Body]] = [[{}] * each for _ in range(threads)]
    return many_clients(servers, token, work, lambda _: None, get_health)


def in_process(url: str, warm: list[Body], posts: list[Body], tick: Tick) -> Answers:
    """The same requests through `ReservationService.reserve`: no HTTP, no JSON."""
    repo = open_repository(url)
    service = ReservationService(repo)
    service.start()
    user = User("bench", "user")
    answers = Answers()
    try:
        for n, body in enumerate([*warm, *posts]):
            began = time.perf_counter()
            try:
                service.reserve(user, Reserve.parse(body))
                status = 201
            except (RejectedError, ConflictError):
                status = 409
            if n >= len(warm):
                answers.results.append((status, time.perf_counter() - began))
                tick(1)
    finally:
        repo.close()
    answers.wall_s = sum(s for _, s in answers.results)
    return answers
