"""`HttpCourier`: POSTs NSI confirmations and notifications to requesters' replyTo, in order.

One worker thread sends everything in the order it was queued, so a
requester hears of a connection's steps in the order they happened; a
requester that cannot be reached is logged and skipped (NSI leaves the
requester to ask again with querySummary).
"""

from __future__ import annotations

import logging
import queue
import threading

import httpx

from braid.adapters.nsi.replies import encode
from braid.app.nsi.messages import Outgoing

__all__ = ["HttpCourier"]

log = logging.getLogger(__name__)


class HttpCourier:
    def __init__(self, timeout: float = 10.0) -> None:
        self._client = httpx.Client(timeout=timeout)
        self._queue: queue.Queue[Outgoing | None] = queue.Queue()
        self._worker = threading.Thread(target=self._run, name="nsi-courier", daemon=True)
        self._worker.start()

    def send(self, outgoing: Outgoing) -> None:
        self._queue.put(outgoing)

    def close(self) -> None:
        self._queue.put(None)
        self._worker.join(timeout=10)
        self._client.close()

    def flush(self) -> None:
        """Wait until everything queued so far has been sent (or given up on)."""
        self._queue.join()

    def _run(self) -> None:
        while True:
            outgoing = self._queue.get()
            try:
                if outgoing is None:
                    return
                self._deliver(outgoing)
            finally:
                self._queue.task_done()

    def _deliver(self, outgoing: Outgoing) -> None:
        action, body = encode(outgoing.header, outgoing.message)
        headers = {"Content-Type": "text/xml; charset=utf-8", "SOAPAction": action}
        try:
            answer = self._client.post(outgoing.reply_to, content=body, headers=headers)
        except httpx.HTTPError as exc:
            log.warning("NSI: cannot deliver %s to %s: %s", action, outgoing.reply_to, exc)
            return
        if answer.status_code >= 300:
            log.warning("NSI: %s to %s answered %s", action, outgoing.reply_to, answer.status_code)
