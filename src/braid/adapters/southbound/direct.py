"""The direct driver: program Open vSwitch bridges with `ovs-ofctl` (seed 003's "dpctl method").

No controller process: each call runs `ovs-ofctl -O OpenFlow13` against the
bridge's management socket. Changes go in one OpenFlow bundle per switch
(atomic: a packet sees the table before or after, never half), falling back
to separate group and flow commands where a switch refuses bundles.

Enforcement (`braid.core.rules.enforcement`) goes around the bundle, as
`ovs-ofctl bundle` refuses meter messages and queues are not OpenFlow here:
meters are written with `add-meter`/`mod-meter` before the bundle (a flow may
only name a meter the switch holds) and deleted after it; port queues are
HTB classes on the port's netdev (`tc_queues`, because the userspace datapath
does not hand `set_queue` to the kernel), added first and removed last.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Final, Protocol

from braid.adapters.southbound.desired import DesiredState
from braid.adapters.southbound.driver import ReconcileReport, SouthboundError
from braid.adapters.southbound.ofctl_text import (
    flow_key_text,
    flow_text,
    group_text,
    meter_text,
    parse_flow,
    parse_group,
    parse_meters,
)
from braid.adapters.southbound.tc_queues import TcQueues, held
from braid.core.rules.model import (
    BRAID_COOKIE_MASK,
    BRAID_COOKIE_TAG,
    BRAID_GROUP_IDS,
    Meter,
    Queue,
    RuleSet,
)
from braid.core.rules.tables import difference

__all__ = ["CommandRunner", "OfctlDriver", "ofctl_runner"]

_DPID_RE: Final = re.compile(r"dpid:([0-9a-fA-F]{16})")
_PORT_RE: Final = re.compile(r"^\s*(\d+)\(([^)]+)\):", re.MULTILINE)


class CommandRunner(Protocol):
    """Runs `ovs-ofctl` with these arguments (and stdin); returns stdout or raises."""

    def __call__(self, args: Sequence[str], stdin: str | None = None) -> str: ...


def ofctl_runner(
    rundir: str | None = None, protocol: str = "OpenFlow13", timeout: float = 20.0
) -> CommandRunner:
    """A runner calling the real `ovs-ofctl`; `rundir` sets OVS_RUNDIR (bridge sockets)."""
    env = dict(os.environ)
    if rundir is not None:
        env["OVS_RUNDIR"] = rundir

    def run(args: Sequence[str], stdin: str | None = None) -> str:
        command = ["ovs-ofctl", "-O", protocol, *args]
        try:
            done = subprocess.run(
                command, input=stdin, capture_output=True, text=True, env=env, timeout=timeout
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SouthboundError("", f"{' '.join(command[:4])}: {exc}") from exc
        if done.returncode != 0:
            raise SouthboundError("", done.stderr.strip() or f"exit status {done.returncode}")
        return done.stdout

    return run


class OfctlDriver:
    """Drives bridges named in `bridges` (switch name -> ovs-ofctl target, e.g. the bridge name).

    `queues` writes port queues on the bridges' port netdevs (by default with
    the local `tc`, so the driver must run on the switches' machine).
    """

    def __init__(
        self,
        bridges: Mapping[str, str],
        runner: CommandRunner | None = None,
        *,
        bundle: bool = True,
        queues: TcQueues | None = None,
    ) -> None:
        self.bridges = dict(bridges)
        self.run = runner or ofctl_runner()
        self.bundle = bundle
        self.queues = queues or TcQueues()
        self.desired = DesiredState()
        self._dpids: dict[str, int] = {}
        self._netdevs: dict[str, dict[int, str]] = {}

    # --- the SouthboundDriver interface ---

    def apply(self, rule_set: RuleSet) -> None:
        self._target(rule_set.switch)
        self._change(rule_set, RuleSet(rule_set.switch, rule_set.dpid))
        self.desired.add(rule_set)

    def remove(self, rule_set: RuleSet) -> None:
        self._target(rule_set.switch)
        self._change(RuleSet(rule_set.switch, rule_set.dpid), rule_set)
        self.desired.discard(rule_set)

    def dump(self) -> dict[str, RuleSet]:
        return {switch: self.dump_switch(switch) for switch in sorted(self.bridges)}

    def reconcile(self) -> dict[str, ReconcileReport]:
        reports = {}
        for switch in sorted(self.bridges):
            actual = self.dump_switch(switch)
            desired = self.desired.get(switch, actual.dpid)
            # Compare queues as tc holds them, but write the rates asked for.
            as_held = replace(desired, queues=tuple(held(q) for q in desired.queues))
            add, delete = difference(actual, as_held)
            asked = {q.key: q for q in desired.queues}
            add = replace(add, queues=tuple(asked[q.key] for q in add.queues))
            if not (add.empty and delete.empty):
                self._change(add, delete)
            reports[switch] = ReconcileReport(switch, add, delete)
        return reports

    # --- helpers ---

    def dump_switch(self, switch: str) -> RuleSet:
        """braid's flows, groups, meters and port queues on one switch, read back.

        Queue rates are as tc holds them (`tc_queues.held`)."""
        target = self._target(switch)
        cookie = f"cookie={BRAID_COOKIE_TAG:#x}/{BRAID_COOKIE_MASK:#x}"
        flow_lines = self._call(switch, ["--no-names", "--no-stats", "dump-flows", target, cookie])
        group_lines = self._call(switch, ["dump-groups", target])
        meter_lines = self._call(switch, ["dump-meters", target])
        queues = [
            q for port in sorted(self.netdevs(switch)) for q in self._dump_queues(switch, port)
        ]
        try:
            flows = [parse_flow(line) for line in _entries(flow_lines)]
            groups = [parse_group(line) for line in _entries(group_lines)]
            groups = [g for g in groups if g.group_id in BRAID_GROUP_IDS]
            meters = parse_meters(meter_lines)
            return RuleSet.of(switch, self.dpid(switch), flows, groups, meters, queues)
        except SouthboundError as exc:
            raise SouthboundError(switch, exc.message) from exc

    def netdevs(self, switch: str, *, refresh: bool = False) -> dict[int, str]:
        """OpenFlow port number -> netdev name of the switch's ports (from `ovs-ofctl show`)."""
        if refresh or switch not in self._netdevs:
            shown = self._call(switch, ["show", self._target(switch)])
            self._netdevs[switch] = {int(n): name for n, name in _PORT_RE.findall(shown)}
        return self._netdevs[switch]

    def dpid(self, switch: str) -> int:
        if switch not in self._dpids:
            found = _DPID_RE.search(self._call(switch, ["show", self._target(switch)]))
            if found is None:
                raise SouthboundError(switch, "ovs-ofctl show gave no datapath id")
            self._dpids[switch] = int(found.group(1), 16)
        return self._dpids[switch]

    def _target(self, switch: str) -> str:
        target = self.bridges.get(switch)
        if target is None:
            raise SouthboundError(switch, "not managed by this driver (no bridge configured)")
        return target

    def _call(self, switch: str, args: Sequence[str], stdin: str | None = None) -> str:
        with _naming(switch):
            return self.run(args, stdin)

    def _change(self, add: RuleSet, delete: RuleSet) -> None:
        """Add `add` and delete `delete` on one switch, in the order that keeps it valid."""
        switch = add.switch
        self._apply_queues(switch, add.queues)
        self._add_meters(switch, add.meters)
        self._write(switch, [*_add_lines(add), *_delete_lines(delete)])
        self._delete_meters(switch, delete.meters)
        self._remove_queues(switch, delete.queues)

    def _add_meters(self, switch: str, meters: Iterable[Meter]) -> None:
        target = self._target(switch)
        for meter in meters:
            try:
                self._call(switch, ["add-meter", target, meter_text(meter)])
            except SouthboundError as exc:
                if "METER_EXISTS" not in exc.message:
                    raise
                self._call(switch, ["mod-meter", target, meter_text(meter)])

    def _delete_meters(self, switch: str, meters: Iterable[Meter]) -> None:
        target = self._target(switch)
        for meter in meters:
            self._call(switch, ["del-meters", target, f"meter={meter.meter_id}"])

    def _by_netdev(self, switch: str, queues: Iterable[Queue]) -> dict[str, list[Queue]]:
        by_port: defaultdict[int, list[Queue]] = defaultdict(list)
        for queue in queues:
            by_port[queue.port].append(queue)
        if not by_port:
            return {}
        netdevs = self.netdevs(switch)
        if not set(by_port) <= set(netdevs):
            netdevs = self.netdevs(switch, refresh=True)  # a port added since we looked
        missing = sorted(set(by_port) - set(netdevs))
        if missing:
            raise SouthboundError(switch, f"queue on port {missing[0]}, which the switch lacks")
        return {netdevs[port]: qs for port, qs in sorted(by_port.items())}

    def _apply_queues(self, switch: str, queues: Iterable[Queue]) -> None:
        for netdev, on_port in self._by_netdev(switch, queues).items():
            with _naming(switch):
                self.queues.apply(netdev, on_port)

    def _remove_queues(self, switch: str, queues: Iterable[Queue]) -> None:
        for netdev, on_port in self._by_netdev(switch, queues).items():
            with _naming(switch):
                self.queues.remove(netdev, on_port)

    def _dump_queues(self, switch: str, port: int) -> tuple[Queue, ...]:
        netdev = self.netdevs(switch)[port]
        try:
            with _naming(switch):
                return self.queues.dump(netdev, port)
        except SouthboundError as exc:
            if "Cannot find device" in exc.message:
                return ()  # a port without a kernel netdev (patch port) holds no queue
            raise

    def _write(self, switch: str, lines: Sequence[str]) -> None:
        if not lines:
            return
        target = self._target(switch)
        if self.bundle:
            try:
                self._call(switch, ["bundle", target, "-"], "\n".join(lines) + "\n")
                return
            except SouthboundError as exc:
                if not _bundles_unsupported(exc.message):
                    raise
                self.bundle = False  # this switch has no bundles: go one table at a time
        self._write_unbundled(switch, target, lines)

    def _write_unbundled(self, switch: str, target: str, lines: Sequence[str]) -> None:
        groups_first = [ln[len("group ") :] for ln in lines if ln.startswith("group add_or_mod ")]
        flows = [ln[len("flow ") :] for ln in lines if ln.startswith("flow ")]
        groups_last = [ln[len("group delete ") :] for ln in lines if ln.startswith("group delete ")]
        for command, entries in (
            ("add-groups", groups_first),
            ("add-flows", flows),
            ("del-groups", groups_last),
        ):
            if entries:
                self._call(switch, [command, target, "-"], "\n".join(entries) + "\n")


@contextmanager
def _naming(switch: str) -> Iterator[None]:
    """Name `switch` in a `SouthboundError` raised inside (runners do not know it)."""
    try:
        yield
    except SouthboundError as exc:
        raise SouthboundError(switch, exc.message) from exc


def _bundles_unsupported(message: str) -> bool:
    """Whether an error says the switch cannot do bundles (not that a change in one failed)."""
    if "OFPBFC_MSG_FAILED" in message:
        return False  # the bundle worked; a message in it was refused
    signs = ("OFPBRC_BAD_TYPE", "OFPBRC_BAD_EXPERIMENTER", "OFPBFC_BAD_", "not supported")
    return any(sign in message for sign in signs)


def _entries(output: str) -> Iterable[str]:
    """Entry lines of a dump, without its reply header."""
    for line in output.splitlines():
        text = line.strip()
        if text and not text.startswith(("OFPST_", "NXST_", "OFPT_")):
            yield text


def _add_lines(rule_set: RuleSet) -> list[str]:
    """Bundle lines adding groups first (flows may point at them), then flows."""
    return [f"group add_or_mod {group_text(g)}" for g in rule_set.groups] + [
        f"flow add {flow_text(f)}" for f in rule_set.flows
    ]


def _delete_lines(rule_set: RuleSet) -> list[str]:
    """Bundle lines deleting flows first (strictly, by key), then the groups they used."""
    return [f"flow delete_strict {flow_key_text(f)}" for f in rule_set.flows] + [
        f"group delete group_id={g.group_id}" for g in rule_set.groups
    ]
