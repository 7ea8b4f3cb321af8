"""`SwitchStats` through `braid controller`: its API reads counters and sends packet-outs
over the switches' OpenFlow connections (so nothing runs on the switches' host)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.driver import naming_the_switch
from braid.adapters.southbound.switch_stats import FlowCount
from braid.app.provisioning.ports import SwitchError
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.model import Action

__all__ = ["ControllerStats"]


class ControllerStats:
    """Counters and packet-outs of the switches in `dpids` (name -> datapath id) via `client`."""

    def __init__(self, client: ControllerDriver, dpids: Mapping[str, int]) -> None:
        self.client = client
        self.dpids = dict(dpids)

    def flow_counts(self, switch: str, cookie: int, mask: int) -> list[FlowCount]:
        with naming_the_switch(switch):
            return self.client.flow_stats(self._dpid(switch), cookie, mask)

    def meter_counts(self, switch: str) -> dict[int, PacketsBytes]:
        with naming_the_switch(switch):
            return self.client.meter_stats(self._dpid(switch))

    def packet_out(self, switch: str, actions: tuple[Action, ...], frames: Sequence[bytes]) -> None:
        with naming_the_switch(switch):
            self.client.packet_out(self._dpid(switch), actions, list(frames))

    def _dpid(self, switch: str) -> int:
        dpid = self.dpids.get(switch)
        if dpid is None:
            raise SwitchError(switch, "no datapath id for it in the wiring")
        return dpid
