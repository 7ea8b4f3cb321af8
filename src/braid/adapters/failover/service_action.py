"""A monitor's action that tells `braid serve` instead of writing a switch.

Failing over means the watched link is down, going back means it is up:
the action posts that to `POST /v1/links/{link}/state` with a monitor's
token, and the service moves every reservation on the link (protected ones
to their standby) and programs the switches itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

import httpx

from braid.adapters.failover.actions import ActionOutcome

__all__ = ["ServiceAction"]

TIMEOUT_S: Final = 5.0


class ServiceAction:
    """Posts `link` down when the monitor moves off `primary`, up when it comes back."""

    def __init__(
        self,
        client: httpx.Client,
        link: str,
        primary: str,
        wall: Callable[[], float] = time.time,
    ) -> None:
        """`client` has the service's base URL and the monitor's token in its headers."""
        self._client, self._link, self._primary, self._wall = client, link, primary, wall

    @staticmethod
    def connect(url: str, token: str, link: str, primary: str) -> ServiceAction:
        headers = {"Authorization": f"Bearer {token}"}
        client = httpx.Client(base_url=url, headers=headers, timeout=TIMEOUT_S)
        return ServiceAction(client, link, primary)

    def close(self) -> None:
        self._client.close()

    def __call__(self, to: str) -> ActionOutcome:
        began = self._wall()
        state = "up" if to == self._primary else "down"
        path = f"/v1/links/{self._link}/state"
        try:
            answer = self._client.post(path, json={"state": state})
        except httpx.HTTPError as exc:
            return ActionOutcome(to, began, self._wall(), False, f"braid serve: {exc}")
        if answer.status_code != 200:
            why = _error(answer)
            return ActionOutcome(to, began, self._wall(), False, f"braid serve: {why}")
        return ActionOutcome(to, began, self._wall(), True)


def _error(answer: httpx.Response) -> str:
    try:
        message = answer.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = answer.text[:200]
    return f"{answer.status_code} {message}"
