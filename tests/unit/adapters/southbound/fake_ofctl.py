"""An in-memory stand-in for `ovs-ofctl`, backed by fake switches (for driver unit tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.ofctl_text import (
    flow_text,
    group_text,
    parse_flow,
    parse_group,
    parse_meters,
)
from braid.core.rules.model import GroupAction, Meter, RuleSet
from braid.testing.fake_switch import FakeSwitch

_PREFIX = {"add-groups": "group ", "add-flows": "flow ", "del-groups": "group delete "}


class FakeOfctl:
    """Understands the ovs-ofctl commands the direct driver uses, on named bridges."""

    def __init__(
        self,
        bridges: dict[str, int],
        *,
        bundles: bool = True,
        ports: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        self.switches = {name: FakeSwitch(name, dpid) for name, dpid in bridges.items()}
        self.bundles = bundles
        self.ports = {name: sorted((ports or {}).get(name, ())) for name in bridges}
        self.calls: list[str] = []
        self.refuse: str | None = None  # an error to answer the next change with

    def __call__(self, args: Sequence[str], stdin: str | None = None) -> str:
        command, target = [a for a in args if not a.startswith("--")][:2]
        self.calls.append(command)
        switch = self.switches.get(target)
        if switch is None:
            raise SouthboundError("", f"{target} is not a bridge or a socket")
        lines = [line for line in (stdin or "").splitlines() if line.strip()]
        if self.refuse is not None and lines:
            message, self.refuse = self.refuse, None
            raise SouthboundError("", message)
        if command == "bundle" and not self.bundles:
            raise SouthboundError("", "Error OFPBRC_BAD_TYPE for: ONFT_BUNDLE_CONTROL")
        if command == "bundle" or command in _PREFIX:
            for line in lines:
                self._change(switch, _PREFIX.get(command, "") + line)
            return ""
        if command == "dump-flows":
            rows = [_as_dumped(flow_text(f)) for f in switch.dump().flows]
            return "OFPST_FLOW reply (OF1.3) (xid=0x2):\n" + "".join(f" {r}\n" for r in rows)
        if command == "dump-groups":
            rows = [group_text(g) for g in switch.dump().groups]
            return "OFPST_GROUP_DESC reply (OF1.3) (xid=0x2):\n" + "".join(f" {r}\n" for r in rows)
        if command == "show":
            rows = [
                f" {n}({target}-eth{n}): addr:00:00:00:00:00:0{n % 10}\n"
                for n in self.ports[target]
            ]
            head = f"OFPT_FEATURES_REPLY (OF1.3) (xid=0x2): dpid:{switch.dpid:016x}\n"
            return head + "".join(rows) + f" LOCAL({target}): addr:00:00:00:00:00:00\n"
        if command in ("add-meter", "mod-meter", "del-meters", "dump-meters"):
            return self._meter(switch, command, args[-1])
        raise SouthboundError("", f"unknown command {command}")

    @staticmethod
    def _meter(switch: FakeSwitch, command: str, text: str) -> str:
        if command == "dump-meters":
            rows = [
                f"meter={m.meter_id} kbps burst stats bands=\n"
                f"type=drop rate={m.rate_kbps} burst_size={m.burst_kbits}\n"
                for m in switch.dump().meters
            ]
            return "OFPST_METER_CONFIG reply (OF1.3) (xid=0x2):\n" + "".join(rows)
        if command == "del-meters":
            meter_id = int(text.partition("=")[2])
            if meter_id in switch.meters:  # as on a real switch, its flows go with it
                switch.remove(RuleSet(switch.name, switch.dpid, meters=(switch.meters[meter_id],)))
            return ""
        meter = _meter_from_text(text)
        exists = meter.meter_id in switch.meters
        if command == "add-meter" and exists:
            raise SouthboundError("", "OFPT_ERROR (OF1.3) (xid=0x2): OFPMMFC_METER_EXISTS")
        if command == "mod-meter" and not exists:
            raise SouthboundError("", "OFPT_ERROR (OF1.3) (xid=0x2): OFPMMFC_UNKNOWN_METER")
        switch.meters[meter.meter_id] = meter
        return ""

    @staticmethod
    def _change(switch: FakeSwitch, line: str) -> None:
        kind, verb, text = line.split(" ", 2)
        if (kind, verb) == ("group", "add_or_mod"):
            group = parse_group(text)
            switch.groups[group.group_id] = group
        elif (kind, verb) == ("group", "delete"):
            group_id = int(text.partition("=")[2])
            switch.groups.pop(group_id, None)
            # As on a real switch, deleting a group deletes the flows that use it.
            for key, flow in list(switch.flows.items()):
                if GroupAction(group_id) in flow.actions:
                    del switch.flows[key]
        elif (kind, verb) == ("flow", "add"):
            flow = parse_flow(_as_dumped(text))
            if flow.meter_id is not None and flow.meter_id not in switch.meters:
                raise SouthboundError("", "OFPT_ERROR (OF1.3) (xid=0x6): OFPMMFC_INVALID_METER")
            switch.flows[flow.key] = flow
        elif (kind, verb) == ("flow", "delete_strict"):
            switch.flows.pop(parse_flow(text + " actions=drop").key, None)
        else:
            raise SouthboundError("", f"cannot do {line!r}")


def _as_dumped(text: str) -> str:
    """A flow in ovs-ofctl's input syntax, as dump-flows prints it."""
    head, _, actions = text.rpartition(",actions=")
    return f"{head} actions={actions}"


def _meter_from_text(text: str) -> Meter:
    """A meter in `add-meter` syntax, read the way dump-meters would print it back."""
    head, _, band = text.partition(",bands=")
    fields = head.split(",")
    dumped = f"{fields[0]} {' '.join(fields[1:])} bands=\n{band.replace(',', ' ')}\n"
    (meter,) = parse_meters(dumped)
    return meter
