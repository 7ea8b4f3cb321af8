"""A small typed client of braid's REST API (what `braid reserve`, `braid list` … use).

    with BraidClient("http://127.0.0.1:8080", token) as braid:
        view = braid.reserve({"src": "ORNL", "dst": "NERSC", "bandwidth": "10G", ...})

Every failure is one of two exceptions: `UnreachableError` (no answer at all) or
`ApiError` (an answer in braid's error shape, or something that is not braid).
"""

from __future__ import annotations

import ssl
import time
import uuid
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Final, Self
from urllib.parse import quote

import httpx

DEFAULT_URL: Final = "http://127.0.0.1:8080"
TIMEOUT_SECONDS: Final = 30.0
# Rows asked for per page when listing (the server's most).
PAGE: Final = 1000

Json = dict[str, Any]
IDEMPOTENCY_HEADER: Final = "Idempotency-Key"
# Pauses between the tries of a POST that got no answer (then the error is raised).
RETRY_PAUSES: Final = (0.5, 2.0)


def new_idempotency_key() -> str:
    return f"braid-cli-{uuid.uuid4()}"


class UnreachableError(Exception):
    """Nothing answered at the URL (refused, unknown host, timed out)."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"cannot reach braid at {url}: {why}")
        self.url = url
        self.why = why


class ApiError(Exception):
    """The server answered with an error; `error` is the body's `error` object."""

    def __init__(self, status: int, error: Mapping[str, Any]) -> None:
        self.status = status
        self.error = dict(error)
        self.code = str(error.get("code", ""))
        self.message = str(error.get("message", ""))
        self.field = str(error.get("field") or "")
        self.alternatives: list[Json] = list(error.get("alternatives") or [])
        self.conflicts: list[Any] = list(error.get("conflicts") or [])
        where = f"{self.field}: " if self.field else ""
        super().__init__(f"{status} {self.code}: {where}{self.message}")


class BraidClient:
    """One connection pool to one braid server; use as a context manager or call close()."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = TIMEOUT_SECONDS,
        transport: httpx.BaseTransport | None = None,
        verify: ssl.SSLContext | bool = True,
        zone: str | None = None,
    ) -> None:
        """`verify`: how an https:// server is checked (an SSL context trusting a
        given CA, or True for the system's CAs). `zone`: answers also in that zone
        (`?tz=`: each instant's `X_local`, a refusal's reasons in it)."""
        self.url = url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(
            base_url=self.url,
            headers=headers,
            params={"tz": zone} if zone else None,
            timeout=timeout,
            transport=transport,
            verify=verify,
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- reservations ----------------------------------------------------------------

    def reserve(self, body: Mapping[str, Any], *, key: str | None = None) -> Json:
        """Book `body`. The request carries an Idempotency-Key (a new one unless given),
        so the retries after a lost answer get the first booking, never a second."""
        return self._safe_post("/v1/reservations", key, json=dict(body))

    def find(self, *, limit: int | None = None, **filters: str | None) -> list[Json]:
        """Every matching reservation, following the pages; at most `limit` if given."""
        params = {k: v for k, v in filters.items() if v is not None}
        found: list[Json] = []
        while limit is None or len(found) < limit:
            params["limit"] = str(PAGE if limit is None else min(limit - len(found), PAGE))
            page = self._object("GET", "/v1/reservations", params=params)
            found += page["reservations"]
            if not page.get("next"):
                break
            params["after"] = page["next"]
        return found if limit is None else found[:limit]

    def get(self, reservation_id: str) -> Json:
        return self._object("GET", f"/v1/reservations/{_segment(reservation_id)}")

    def cancel(self, reservation_id: str) -> Json:
        return self._object("DELETE", f"/v1/reservations/{_segment(reservation_id)}")

    def modify(self, reservation_id: str, body: Mapping[str, Any]) -> Json:
        path = f"/v1/reservations/{_segment(reservation_id)}"
        return self._object("PATCH", path, json=dict(body))

    def confirm(self, reservation_id: str, *, key: str | None = None) -> Json:
        path = f"/v1/reservations/{_segment(reservation_id)}/confirm"
        return self._safe_post(path, key)

    def delivery(self, reservation_id: str) -> Json:
        return self._object("GET", f"/v1/reservations/{_segment(reservation_id)}/delivery")

    def audit(self, reservation_id: str) -> list[Json]:
        path = f"/v1/reservations/{_segment(reservation_id)}/audit"
        entries: list[Json] = self._object("GET", path)["entries"]
        return entries

    def maintenance(self, body: Mapping[str, Any], *, key: str | None = None) -> Json:
        return self._safe_post("/v1/maintenance", key, json=dict(body))

    def link_state(self, link: str, state: str) -> Json:
        path = f"/v1/links/{_segment(link)}/state"
        return self._object("POST", path, json={"state": state})

    def topology(self) -> Json:
        return self._object("GET", "/v1/topology")

    def replace_topology(self, data: Mapping[str, Any], *, force: bool = False) -> Json:
        params = {"force": "true"} if force else {}
        return self._object("PUT", "/v1/topology", json=dict(data), params=params)

    def availability(self, query: Mapping[str, Any]) -> Json:
        params = {k: _query_value(v) for k, v in query.items() if v is not None}
        return self._object("GET", "/v1/availability", params=params)

    # -- transport -------------------------------------------------------------------

    def _safe_post(self, path: str, key: str | None, **kwargs: Any) -> Json:
        """POST with an Idempotency-Key, sent again (same key) while no answer comes back:
        a request that reached the server before the connection failed is not done twice."""
        headers = {IDEMPOTENCY_HEADER: key or new_idempotency_key()}
        for pause in (*RETRY_PAUSES, None):
            try:
                return self._object("POST", path, headers=headers, **kwargs)
            except UnreachableError:
                if pause is None:
                    raise
                time.sleep(pause)
        raise AssertionError("unreachable")  # the loop returns or raises

    def _object(self, method: str, path: str, **kwargs: Any) -> Json:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.ConnectError as exc:
            raise UnreachableError(self.url, f"connection failed ({exc})") from exc
        except httpx.TimeoutException as exc:
            raise UnreachableError(self.url, "no answer in time") from exc
        except httpx.TransportError as exc:
            raise UnreachableError(self.url, str(exc) or type(exc).__name__) from exc
        return _decode(response)


def _decode(response: httpx.Response) -> Json:
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.is_success and isinstance(data, dict):
        return data
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        raise ApiError(response.status_code, data["error"])
    # Not braid's error shape: a proxy, or something else on that port.
    text = response.text.strip()[:200] or response.reason_phrase
    raise ApiError(response.status_code, {"code": f"http_{response.status_code}", "message": text})


def _segment(value: str) -> str:
    """A path segment with '/', '?' and the like escaped, so an id cannot change the route."""
    return quote(value, safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
