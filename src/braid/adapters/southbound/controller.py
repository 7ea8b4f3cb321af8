"""The controller driver: a client of the `braid controller` process (seed 003's "ODL method").

The controller holds the desired state and the switch connections; this
driver only sends it rule sets over the local HTTP API (`http_api`). A rule
set for a switch that is not connected is kept by the controller and
installed when the switch connects; `apply`/`remove` then raise
`SwitchNotConnectedError` so the caller knows it is not in effect yet.
"""

from __future__ import annotations

from typing import Any

import httpx

from braid.adapters.southbound.codec import (
    flow_counts_from_json,
    meter_counts_from_json,
    packet_out_to_json,
    rule_set_from_json,
    rule_set_to_json,
)
from braid.adapters.southbound.driver import ReconcileReport, SouthboundError
from braid.adapters.southbound.switch_stats import FlowCount
from braid.core.delivery.samples import PacketsBytes
from braid.core.errors import InputError
from braid.core.rules.model import Action, RuleSet

__all__ = ["ControllerDriver", "SwitchNotConnectedError"]


class SwitchNotConnectedError(SouthboundError):
    """The controller accepted the change but the switch is not connected yet."""


class ControllerDriver:
    """Talks to `braid controller` at `address`: "HOST:PORT", "http://HOST:PORT" or "unix:PATH"."""

    def __init__(self, address: str, timeout: float = 30.0, token: str | None = None) -> None:
        """`token`: the controller's API token (`braid controller --api-token-file`), if any."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if address.startswith("unix:"):
            transport = httpx.HTTPTransport(uds=address[len("unix:") :])
            self._client = httpx.Client(
                transport=transport,
                base_url="http://braid-controller",
                timeout=timeout,
                headers=headers,
            )
        else:
            base = address if "://" in address else f"http://{address}"
            self._client = httpx.Client(base_url=base, timeout=timeout, headers=headers)
        self.address = address
        self.token = token  # another client of the same controller sends it too

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ControllerDriver:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def apply(self, rule_set: RuleSet) -> None:
        self._change("/v1/apply", rule_set)

    def remove(self, rule_set: RuleSet) -> None:
        self._change("/v1/remove", rule_set)

    def dump(self) -> dict[str, RuleSet]:
        body = self._call("GET", "/v1/dump")
        sets = [rule_set_from_json(r, f"rule_sets[{i}]") for i, r in enumerate(body["rule_sets"])]
        return {r.switch: r for r in sets}

    def reconcile(self) -> dict[str, ReconcileReport]:
        body = self._call("POST", "/v1/reconcile")
        reports = {}
        for item in body["reports"]:
            reports[item["switch"]] = ReconcileReport(
                item["switch"],
                rule_set_from_json(item["added"]),
                rule_set_from_json(item["deleted"]),
            )
        return reports

    def switches(self) -> dict[int, str]:
        """Connected switches: datapath id -> name."""
        return {s["dpid"]: s["switch"] for s in self._call("GET", "/v1/switches")["switches"]}

    def flow_stats(self, dpid: int, cookie: int, mask: int) -> list[FlowCount]:
        """The switch's flows with cookie & mask == cookie, and their counters."""
        query = {"cookie": f"{cookie:#x}", "cookie_mask": f"{mask:#x}"}
        return flow_counts_from_json(self._call("GET", f"/v1/switches/{dpid}/flows", query))

    def meter_stats(self, dpid: int) -> dict[int, PacketsBytes]:
        """Per meter of the switch, its bands' packets and bytes."""
        return meter_counts_from_json(self._call("GET", f"/v1/switches/{dpid}/meters"))

    def packet_out(self, dpid: int, actions: tuple[Action, ...], frames: list[bytes]) -> None:
        """Each frame sent from the switch through `actions`, once the switch confirmed them."""
        body = packet_out_to_json(actions, frames)
        response = self._send("POST", f"/v1/switches/{dpid}/packet-out", body)
        self._check(response, "")

    def _change(self, path: str, rule_set: RuleSet) -> None:
        response = self._send("POST", path, rule_set_to_json(rule_set))
        if response.status_code == httpx.codes.ACCEPTED:
            raise SwitchNotConnectedError(
                rule_set.switch,
                "not connected; the controller installs it when the switch connects",
            )
        self._check(response, rule_set.switch)

    def _call(self, method: str, path: str, query: dict[str, str] | None = None) -> Any:
        response = self._send(method, path, None, query)
        self._check(response, "")
        return response.json()

    def _send(
        self, method: str, path: str, body: Any, query: dict[str, str] | None = None
    ) -> httpx.Response:
        try:
            return self._client.request(method, path, json=body, params=query)
        except httpx.HTTPError as exc:
            raise SouthboundError("", f"controller at {self.address} unreachable: {exc}") from exc

    @staticmethod
    def _check(response: httpx.Response, switch: str) -> None:
        if response.is_success:
            return
        try:
            message = str(response.json().get("error"))
        except ValueError:
            message = response.text
        if response.status_code == httpx.codes.BAD_REQUEST:
            raise InputError("rule_set", message)
        if response.status_code == httpx.codes.UNAUTHORIZED:
            raise SouthboundError(
                switch,
                f"controller refused braid: {message} (give the wiring file's "
                "drivers.controller.token_file the file the controller reads)",
            )
        raise SouthboundError(switch, f"controller answered {response.status_code}: {message}")
