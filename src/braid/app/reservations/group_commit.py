"""Group commit: admissions arriving together in one replica share one store transaction.

No thread of its own: the first caller to find no batch in progress becomes
the leader and writes everything queued so far with `Repository.write_new`;
callers arriving meanwhile queue up and wait, and the next of them to wake
leads the following batch. Under load a batch holds every admission that
finished planning while the previous one was being written; alone, a caller
writes its own at once, with no waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from braid.app.ports import Repository, WriteStep
from braid.app.records import Reservation

# Beyond this, a batch's loads query and validation outweigh what is shared.
MAX_BATCH: Final = 32


@dataclass(eq=False)
class _Item:
    step: WriteStep
    actor: str
    now: int
    outcome: Reservation | BaseException | None = field(default=None)


class GroupCommit:
    def __init__(
        self,
        repo: Repository,
        max_batch: int = MAX_BATCH,
        timed: Callable[[str, float], None] | None = None,
    ) -> None:
        """`timed("write", seconds)` is told how long each batch's write took."""
        self.repo = repo
        self.max_batch = max_batch
        self.timed = timed
        self._changed = threading.Condition()
        self._queue: list[_Item] = []
        self._writing = False

    def write(self, step: WriteStep, actor: str, now: int) -> Reservation:
        """Store a new reservation or raise ConflictError, like `Repository.write` would."""
        item = _Item(step, actor, now)
        with self._changed:
            self._queue.append(item)
        while True:
            with self._changed:
                while item.outcome is None and self._writing:
                    self._changed.wait()
                if item.outcome is not None:
                    break
                # Lead the next batch: the oldest waiting first, so a caller
                # queued behind a full batch may lead one without its own
                # item, then goes round again.
                batch = self._queue[: self.max_batch]
                del self._queue[: self.max_batch]
                self._writing = True
            self._lead(batch)
        if isinstance(item.outcome, BaseException):
            raise item.outcome
        return item.outcome

    def _lead(self, batch: list[_Item]) -> None:
        # The latest clock of the batch decides what still counts: a hold
        # expired by then no longer takes bandwidth from any of them.
        now = max(item.now for item in batch)
        lost = RuntimeError("the batch was interrupted before it was written")
        outcomes: list[Reservation | BaseException] = [lost] * len(batch)
        began = time.perf_counter()
        try:
            outcomes = list(self.repo.write_new([(i.step, i.actor) for i in batch], now=now))
        except Exception as failure:  # every waiter raises it (a conflict: all plan again)
            outcomes = [failure] * len(batch)
        finally:
            if self.timed is not None:
                self.timed("write", time.perf_counter() - began)
            with self._changed:
                for item, outcome in zip(batch, outcomes, strict=True):
                    item.outcome = outcome
                self._writing = False
                self._changed.notify_all()
