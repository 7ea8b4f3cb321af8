"""`off_loop`: run a blocking call (the service, the store) on a worker thread and await it.

The endpoints are `async` and hand their blocking work here rather than
being plain `def` functions that FastAPI runs through AnyIO's thread pool:
`loop.run_in_executor` on a standard pool makes the same hop with less
Python around it (no capacity limiter or cancel scope per call); with one
client at a time the hop costs about half the CPU. The context is copied
(cheap: a reference to an immutable map), so the request's id goes along.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

T = TypeVar("T")

# As many as AnyIO's default limit, which the API used before: a request
# waiting for the store's group commit holds its thread until the commit.
WORKERS: Final = 40

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _workers() -> ThreadPoolExecutor:
    # Created on first use and shared by every app in the process, like
    # AnyIO's pool: a test that builds many apps does not start many pools.
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="braid-api")
    return _pool


async def off_loop(call: Callable[..., T], *args: Any) -> T:
    """`call(*args)` on a worker thread, in a copy of this context (the request's id goes
    along); its result, or its exception raised here."""
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(_workers(), context.run, call, *args)
