"""Waiting for concurrent futures without blocking an event loop's thread.

The orchestrator process runs every negotiation (synchronous code) in a
greenlet of its own on the one event loop that also drives the agents'
streams and its gRPC server (`in_greenlet`). Where that code waits for
answers (`wait_all`), its greenlet hands the loop back until they are all
in, so the thread every negotiation shares never blocks and no answer has to
cross from one thread to another. Called from any other thread, `wait_all`
blocks as `concurrent.futures.wait` does.

A greenlet must never wait while it holds a lock another greenlet may want:
they share one thread, so the other would block that thread for good. Every
lock on these paths is held only around work that does not wait.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from concurrent.futures import Future
from typing import Any, TypeVar

import greenlet

__all__ = ["in_greenlet", "wait_all"]

T = TypeVar("T")


class _LoopGreenlet(greenlet.greenlet):
    """A negotiation's greenlet; its parent is the loop task that awaits for it."""


def wait_all(waited: Sequence[Future[Any]]) -> None:
    """Return once every one of `waited` is done."""
    if all(f.done() for f in waited):
        return
    current = greenlet.getcurrent()
    if not isinstance(current, _LoopGreenlet):
        futures.wait(waited)
        return
    parent = current.parent
    assert parent is not None, "a loop greenlet runs under the loop's task"
    parent.switch(waited)  # `in_greenlet` awaits them, then switches back


async def in_greenlet(call: Callable[..., T], *args: Any) -> T:
    """Run `call(*args)` on this loop's thread; the loop goes on while it waits."""
    loop = asyncio.get_running_loop()
    runner = _LoopGreenlet(call, greenlet.getcurrent())
    waiting = runner.switch(*args)
    while not runner.dead:
        await _all_done(waiting, loop)
        waiting = runner.switch()
    return waiting  # type: ignore[no-any-return]  # what `call` returned


async def _all_done(waited: Sequence[Future[Any]], loop: asyncio.AbstractEventLoop) -> None:
    pending = [f for f in waited if not f.done()]
    if not pending:
        return
    done: asyncio.Future[None] = loop.create_future()
    left = [len(pending)]
    home = threading.get_ident()

    def settle() -> None:
        if not done.done():
            done.set_result(None)

    def one_more(_: Future[Any]) -> None:
        left[0] -= 1
        if left[0]:
            return
        if threading.get_ident() == home:  # answered on this loop's thread: no wake needed
            settle()
        else:
            loop.call_soon_threadsafe(settle)

    for future in pending:
        future.add_done_callback(one_more)
    await done
