"""Negotiations wait for answers on the event loop without blocking it (`app.loop_waits`)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future

import pytest

from braid.app.loop_waits import in_greenlet, wait_all


def test_a_greenlet_waits_while_the_loop_goes_on() -> None:
    async def main() -> list[str]:
        seen: list[str] = []
        answer: Future[int] = Future()

        def negotiate() -> int:
            seen.append("asked")
            wait_all([answer])  # hands the loop back
            seen.append("answered")
            return answer.result() + 1

        async def agent() -> None:
            await asyncio.sleep(0.01)
            seen.append("agent runs")  # only if the loop was not blocked
            answer.set_result(41)

        got, _ = await asyncio.gather(in_greenlet(negotiate), agent())
        assert got == 42
        return seen

    assert asyncio.run(main()) == ["asked", "agent runs", "answered"]


def test_an_answer_from_another_thread_wakes_the_greenlet() -> None:
    async def main() -> str:
        answer: Future[str] = Future()
        threading.Timer(0.02, answer.set_result, ("from a thread",)).start()

        def negotiate() -> str:
            wait_all([answer])
            return answer.result()

        return await in_greenlet(negotiate)

    assert asyncio.run(main()) == "from a thread"


def test_a_failure_in_the_greenlet_reaches_the_caller() -> None:
    async def main() -> None:
        def negotiate() -> None:
            done: Future[None] = Future()
            done.set_result(None)
            wait_all([done])  # already done: no switch at all
            raise ValueError("no domain path")

        await in_greenlet(negotiate)

    with pytest.raises(ValueError, match="no domain path"):
        asyncio.run(main())


def test_outside_a_greenlet_it_blocks_as_futures_wait_does() -> None:
    answer: Future[int] = Future()
    threading.Timer(0.02, answer.set_result, (7,)).start()
    wait_all([answer])
    assert answer.done() and answer.result() == 7
