"""An in-memory stand-in for `ovs-ofctl`, backed by fake switches (for driver unit tests)."""

from __future__ import annotations

from collections.abc import Sequence

from braid.adapters.southbound.driver import SouthboundError
from braid.adapters.southbound.ofctl_text import flow_text, group_text, parse_flow, parse_group
from braid.core.rules.model import GroupAction
from braid.testing.fake_switch import FakeSwitch

_PREFIX = {"add-groups": "group ", "add-flows": "flow ", "del-groups": "group delete "}


class FakeOfctl:
    """Understands the ovs-ofctl commands the direct driver uses, on named bridges."""

    def __init__(self, bridges: dict[str, int], *, bundles: bool = True) -> None:
        self.switches = {name: FakeSwitch(name, dpid) for name, dpid in bridges.items()}
        self.bundles = bundles
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
            return f"OFPT_FEATURES_REPLY (OF1.3) (xid=0x2): dpid:{switch.dpid:016x}\n"
        raise SouthboundError("", f"unknown command {command}")

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
            switch.flows[flow.key] = flow
        elif (kind, verb) == ("flow", "delete_strict"):
            switch.flows.pop(parse_flow(text + " actions=drop").key, None)
        else:
            raise SouthboundError("", f"cannot do {line!r}")


def _as_dumped(text: str) -> str:
    """A flow in ovs-ofctl's input syntax, as dump-flows prints it."""
    head, _, actions = text.rpartition(",actions=")
    return f"{head} actions={actions}"
