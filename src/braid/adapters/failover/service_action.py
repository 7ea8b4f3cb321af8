"""Telling `braid serve` a link's state: the client, and a monitor's action built on it.

`LinkStateClient` posts `POST /v1/links/{link}/state` with a monitor's token;
the service moves every reservation on the link (protected ones to their
standby) and programs the switches itself. Two things use it: a monitor's
`service` action (failing over means the watched link is down, going back
means it is up) and `braid controller`, which posts what its switches'
port-status events say about the links they belong to.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import httpx

from braid.adapters.failover.actions import ActionOutcome

__all__ = ["LinkStateClient", "Posted", "ServiceAction"]

TIMEOUT_S: Final = 5.0


@dataclass(frozen=True, slots=True)
class Posted:
    """What braid serve said to one post: `error` is None when it took the state."""

    link: str
    state: str
    error: str | None = None
    moved: int = 0  # reservations the change moved

    @property
    def ok(self) -> bool:
        return self.error is None


class LinkStateClient:
    """Posts link states to braid serve with a monitor token."""

    def __init__(self, client: httpx.Client) -> None:
        """`client` has the service's base URL and the monitor's token in its headers."""
        self._client = client

    @staticmethod
    def connect(url: str, token: str, timeout: float = TIMEOUT_S) -> LinkStateClient:
        headers = {"Authorization": f"Bearer {token}"}
        return LinkStateClient(httpx.Client(base_url=url, headers=headers, timeout=timeout))

    def close(self) -> None:
        self._client.close()

    def post(self, link: str, state: str) -> Posted:
        """Never raises for what the service or the network does: the answer says."""
        try:
            answer = self._client.post(f"/v1/links/{link}/state", json={"state": state})
        except httpx.HTTPError as exc:
            return Posted(link, state, f"braid serve: {exc}")
        if answer.status_code != 200:
            return Posted(link, state, f"braid serve: {_error(answer)}")
        try:
            moved = len(answer.json().get("moved") or [])
        except (ValueError, AttributeError):
            moved = 0
        return Posted(link, state, None, moved)


class ServiceAction:
    """Posts `link` down when the monitor moves off `primary`, up when it comes back."""

    def __init__(
        self,
        client: LinkStateClient,
        link: str,
        primary: str,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._client, self._link, self._primary, self._wall = client, link, primary, wall

    @staticmethod
    def connect(url: str, token: str, link: str, primary: str) -> ServiceAction:
        return ServiceAction(LinkStateClient.connect(url, token), link, primary)

    def close(self) -> None:
        self._client.close()

    def __call__(self, to: str) -> ActionOutcome:
        began = self._wall()
        posted = self._client.post(self._link, "up" if to == self._primary else "down")
        return ActionOutcome(to, began, self._wall(), posted.ok, posted.error)


def _error(answer: httpx.Response) -> str:
    try:
        message = answer.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = answer.text[:200]
    return f"{answer.status_code} {message}"
