"""The os-ken application inside `braid controller` (seed 003's "ODL method").

It keeps the OpenFlow 1.3 connections of the switches, holds the desired
rule sets, and reconciles each switch whenever it (re)connects: braid's flows
and groups on the switch are read back and made equal to the desired state
(no duplicates, no leftovers). Meters are OpenFlow meter mods; port queues
are braid's HTB trees on the ports' netdevs (`tc_queues`), written by this
process with the local `tc`, so it runs on the switches' machine. Requests
arrive from other threads (the local HTTP API); each switch has a lock so
that requests and reconciliation never interleave. Changes to a switch are
sent back to back and confirmed by one barrier; errors the switch reports
before the barrier reply fail the request. Flow and meter statistics and
packet-outs serve the circuit check and the delivery counters.
Port-status events go to `port_listener` (`port_reporter` tells braid serve
the links' states).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from os_ken.lib import hub
from os_ken.ofproto import ofproto_v1_3

from braid.adapters.southbound import of13
from braid.adapters.southbound.desired import DesiredState
from braid.adapters.southbound.driver import NotConnectedError, ReconcileReport, SouthboundError
from braid.adapters.southbound.switch_stats import FlowCount
from braid.adapters.southbound.tc_queues import TcQueues, held_difference
from braid.core.delivery.samples import PacketsBytes
from braid.core.rules.model import (
    BRAID_COOKIE_MASK,
    BRAID_COOKIE_TAG,
    BRAID_GROUP_IDS,
    Action,
    Queue,
    RuleSet,
)

REPLY_TIMEOUT: Final = 10.0


@dataclass
class _Waiter:
    """Replies and errors for one outstanding request (keyed by switch and xid)."""

    done: threading.Event = field(default_factory=threading.Event)
    replies: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class BraidControllerApp(app_manager.OSKenApp):  # type: ignore[misc]
    """Switch connections, desired state and reconciliation.

    `state_file` (set on the class before os-ken instantiates it) keeps the
    desired state across controller restarts. Without it a restarted
    controller knows nothing, so it leaves switches it has no rules for as
    they are until braid sends rules or asks it to reconcile, rather than
    wiping the network.
    """

    OFP_VERSIONS: Final = [ofproto_v1_3.OFP_VERSION]
    state_file: Path | None = None
    # Told of every port status (dpid, port, up, live); set on the class like state_file.
    port_listener: Callable[[int, int, bool, bool], None] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.datapaths: dict[int, Any] = {}
        self.names: dict[int, str] = {}
        self.desired = DesiredState()
        if self.state_file is not None and self.state_file.exists():
            self.desired = DesiredState.load(self.state_file)
        for rule_set in self.desired.tables().values():
            self.names[rule_set.dpid] = rule_set.switch
        self._groups_on: dict[int, set[int]] = {}
        self._meters_on: dict[int, set[int]] = {}
        self._netdevs: dict[int, dict[int, str]] = {}
        self.queues = TcQueues()
        self._waiters: dict[tuple[int, int], _Waiter] = {}
        self._batch_errors: dict[tuple[int, int], list[str]] = {}
        self._state = threading.Lock()
        self._switch_locks: dict[int, threading.Lock] = {}

    # --- events from switches (os-ken's event thread) ---

    @set_ev_cls(ofp_event.EventOFPStateChange, [MAIN_DISPATCHER, DEAD_DISPATCHER])  # type: ignore[untyped-decorator]
    def _state_change(self, ev: Any) -> None:
        datapath = ev.datapath
        if ev.state == MAIN_DISPATCHER:
            self.datapaths[datapath.id] = datapath
            self._groups_on.pop(datapath.id, None)
            if self.state_file is not None or datapath.id in self.names:
                # Reconciling waits for replies this very thread delivers: run it apart.
                hub.spawn(self._reconcile_quietly, datapath.id)
            return
        dpid = datapath.id
        if dpid is not None and self.datapaths.get(dpid) is datapath:
            del self.datapaths[dpid]

    @set_ev_cls(  # type: ignore[untyped-decorator]
        [
            ofp_event.EventOFPBarrierReply,
            ofp_event.EventOFPFlowStatsReply,
            ofp_event.EventOFPGroupDescStatsReply,
            ofp_event.EventOFPMeterConfigStatsReply,
            ofp_event.EventOFPMeterStatsReply,
            ofp_event.EventOFPPortDescStatsReply,
        ],
        MAIN_DISPATCHER,
    )
    def _reply(self, ev: Any) -> None:
        msg = ev.msg
        with self._state:
            waiter = self._waiters.get((msg.datapath.id, msg.xid))
        if waiter is None:
            return
        waiter.replies.extend(getattr(msg, "body", None) or [])
        more = getattr(msg, "flags", 0) & msg.datapath.ofproto.OFPMPF_REPLY_MORE
        if not more:
            waiter.done.set()

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)  # type: ignore[untyped-decorator]
    def _port_status(self, ev: Any) -> None:
        msg = ev.msg
        self.logger.info(
            "port status: dpid %s port %s reason %s config %#x state %#x",
            msg.datapath.id, msg.desc.port_no, msg.reason, msg.desc.config, msg.desc.state,
        )  # fmt: skip
        listener = type(self).port_listener  # a plain function stays unbound
        if listener is None:
            return
        up, live = of13.port_is_up(msg.datapath.ofproto, msg.reason, msg.desc)
        listener(msg.datapath.id, msg.desc.port_no, up, live)

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)  # type: ignore[untyped-decorator]
    def _error(self, ev: Any) -> None:
        msg = ev.msg
        text = f"switch refused a message: OpenFlow error type {msg.type} code {msg.code}"
        with self._state:
            sink = self._batch_errors.get((msg.datapath.id, msg.xid))
            waiter = self._waiters.get((msg.datapath.id, msg.xid))
        if sink is not None:
            sink.append(text)
        if waiter is not None:
            waiter.errors.append(text)
            waiter.done.set()

    # --- requests from braid (API threads) ---

    def apply(self, rule_set: RuleSet) -> bool:
        """Add to the desired state and install; False when the switch is not connected."""
        empty = RuleSet(rule_set.switch, rule_set.dpid)
        return self._change(rule_set, self.desired.add, lambda dp: self._write(dp, rule_set, empty))

    def remove(self, rule_set: RuleSet) -> bool:
        """Drop from the desired state and delete; False when the switch is not connected."""
        empty = RuleSet(rule_set.switch, rule_set.dpid)
        return self._change(
            rule_set, self.desired.discard, lambda dp: self._write(dp, empty, rule_set)
        )

    def _change(
        self, rule_set: RuleSet, record: Callable[[RuleSet], None], write: Callable[[Any], None]
    ) -> bool:
        """Record the change in the desired state, then make it; a refused change is forgotten.

        (The switch may hold part of a refused change, since OpenFlow 1.3 has no
        bundles here; the next reconciliation removes it.)
        """
        with self._state:
            before = self.desired.get(rule_set.switch, rule_set.dpid)
            self.names[rule_set.dpid] = rule_set.switch
            record(rule_set)
            self._save()
        try:
            return self._if_connected(rule_set.dpid, write)
        except SouthboundError:
            with self._state:
                self.desired.put(before)
                self._save()
            raise

    def _save(self) -> None:
        if self.state_file is not None:
            self.desired.save(self.state_file)

    def dump(self) -> list[RuleSet]:
        return [self._locked(dpid, self._read) for dpid in sorted(self.datapaths)]

    def reconcile(self) -> list[ReconcileReport]:
        return [self._locked(dpid, self._reconcile) for dpid in sorted(self.datapaths)]

    def connected(self) -> dict[int, str]:
        return {dpid: self.switch_name(dpid) for dpid in sorted(self.datapaths)}

    def switch_name(self, dpid: int) -> str:
        return self.names.get(dpid) or f"dpid:{dpid:016x}"

    def flow_stats(self, dpid: int, cookie: int, mask: int) -> list[FlowCount]:
        """The flows with cookie & mask == cookie and their counters, from the switch."""

        def read(datapath: Any) -> list[FlowCount]:
            replies = self._request(datapath, of13.flow_stats_request(datapath, cookie, mask))
            try:
                return [of13.flow_count_from_stats(s) for s in replies]
            except ValueError as exc:
                raise SouthboundError(self.switch_name(dpid), str(exc)) from exc

        found: list[FlowCount] = self._locked(dpid, read)
        return found

    def meter_stats(self, dpid: int) -> dict[int, PacketsBytes]:
        """Per meter, its bands' counts, from the switch."""
        replies = self._locked(dpid, lambda dp: self._request(dp, of13.meter_stats_request(dp)))
        return of13.meter_counts_from_stats(replies)

    def packet_out(self, dpid: int, actions: tuple[Action, ...], frames: list[bytes]) -> None:
        """Each frame sent through `actions`, confirmed by a barrier."""

        def send(datapath: Any) -> None:
            self._send_batch(datapath, [of13.packet_out(datapath, actions, f) for f in frames])

        self._locked(dpid, send)

    # --- work on one switch (under its lock) ---

    def _if_connected(self, dpid: int, work: Callable[[Any], None]) -> bool:
        if dpid not in self.datapaths:
            return False
        self._locked(dpid, work)
        return True

    def _locked(self, dpid: int, work: Callable[[Any], Any]) -> Any:
        with self._state:
            lock = self._switch_locks.setdefault(dpid, threading.Lock())
        with lock:
            datapath = self.datapaths.get(dpid)
            if datapath is None:
                raise NotConnectedError(self.switch_name(dpid), "not connected to the controller")
            return work(datapath)

    def _reconcile_quietly(self, dpid: int) -> None:
        try:
            report = self._locked(dpid, self._reconcile)
        except SouthboundError as exc:
            self.logger.error("reconciling %s failed: %s", self.switch_name(dpid), exc)
            return
        if report.changed:
            self.logger.info(
                "reconciled %s: %d flows and %d groups added or rewritten, %d and %d deleted",
                report.switch,
                len(report.added.flows),
                len(report.added.groups),
                len(report.deleted.flows),
                len(report.deleted.groups),
            )

    def _reconcile(self, datapath: Any) -> ReconcileReport:
        actual = self._read(datapath)
        add, delete = held_difference(actual, self.desired.get(actual.switch, datapath.id))
        self._write(datapath, add, delete)
        return ReconcileReport(actual.switch, add, delete)

    def _read(self, datapath: Any) -> RuleSet:
        ofp, parser = datapath.ofproto, datapath.ofproto_parser
        flows_request = of13.flow_stats_request(datapath, BRAID_COOKIE_TAG, BRAID_COOKIE_MASK)
        groups_request = parser.OFPGroupDescStatsRequest(datapath, 0)
        meters_request = parser.OFPMeterConfigStatsRequest(datapath, 0, ofp.OFPM_ALL)
        name = self.switch_name(datapath.id)
        try:
            flows = [of13.flow_from_stats(s) for s in self._request(datapath, flows_request)]
            descs = self._request(datapath, groups_request)
            groups = [of13.group_from_desc(d, ofp.OFPP_ANY) for d in descs]
            configs = self._request(datapath, meters_request)
            meters = [m for c in configs if (m := of13.meter_from_config(c, ofp)) is not None]
        except ValueError as exc:
            raise SouthboundError(name, str(exc)) from exc
        self._groups_on[datapath.id] = {g.group_id for g in groups}
        self._meters_on[datapath.id] = {c.meter_id for c in configs}
        owned = [g for g in groups if g.group_id in BRAID_GROUP_IDS]
        queues = self._read_queues(datapath)
        return RuleSet.of(name, datapath.id, flows, owned, meters, queues)

    def _port_netdevs(self, datapath: Any, *, refresh: bool = False) -> dict[int, str]:
        """OpenFlow port number -> netdev name of the switch's ports (port description)."""
        if refresh or datapath.id not in self._netdevs:
            ofp, parser = datapath.ofproto, datapath.ofproto_parser
            ports = self._request(datapath, parser.OFPPortDescStatsRequest(datapath, 0))
            self._netdevs[datapath.id] = {
                p.port_no: p.name.decode() if isinstance(p.name, bytes) else str(p.name)
                for p in ports
                if p.port_no <= ofp.OFPP_MAX
            }
        return self._netdevs[datapath.id]

    def _read_queues(self, datapath: Any) -> list[Queue]:
        found: list[Queue] = []
        for port, netdev in sorted(self._port_netdevs(datapath, refresh=True).items()):
            try:
                found.extend(self.queues.dump(netdev, port))
            except SouthboundError as exc:
                if "Cannot find device" not in exc.message:  # no netdev here: no queue
                    raise SouthboundError(self.switch_name(datapath.id), exc.message) from exc
        return found

    def _write_queues(self, datapath: Any, queues: tuple[Queue, ...], *, remove: bool) -> None:
        if not queues:
            return
        netdevs = self._port_netdevs(datapath)
        if not {q.port for q in queues} <= set(netdevs):
            netdevs = self._port_netdevs(datapath, refresh=True)
        by_netdev: dict[str, list[Queue]] = {}
        for queue in queues:
            if queue.port not in netdevs:
                raise SouthboundError(
                    self.switch_name(datapath.id), f"queue on port {queue.port}, which it lacks"
                )
            by_netdev.setdefault(netdevs[queue.port], []).append(queue)
        for netdev, on_port in by_netdev.items():
            try:
                (self.queues.remove if remove else self.queues.apply)(netdev, on_port)
            except SouthboundError as exc:
                raise SouthboundError(self.switch_name(datapath.id), exc.message) from exc

    def _request(self, datapath: Any, msg: Any) -> list[Any]:
        datapath.set_xid(msg)
        key = (datapath.id, msg.xid)
        waiter = _Waiter()
        with self._state:
            self._waiters[key] = waiter
        try:
            datapath.send_msg(msg)
            if not waiter.done.wait(REPLY_TIMEOUT):
                raise SouthboundError(self.switch_name(datapath.id), "no reply within timeout")
        finally:
            with self._state:
                self._waiters.pop(key, None)
        if waiter.errors:
            raise SouthboundError(self.switch_name(datapath.id), waiter.errors[0])
        return waiter.replies

    def _write(self, datapath: Any, add: RuleSet, delete: RuleSet) -> None:
        """Queues (tc); meters, groups, flows to add; flows, groups, meters to delete; one
        barrier to confirm; queues to delete (tc). The switch takes messages in order."""
        if datapath.id not in self._groups_on:
            self._read(datapath)  # OpenFlow 1.3 has no add-or-modify: learn which groups exist
        self._write_queues(datapath, add.queues, remove=False)
        self._send_batch(datapath, self._messages(datapath, add, delete))
        self._groups_on[datapath.id].update(g.group_id for g in add.groups)
        self._groups_on[datapath.id].difference_update(g.group_id for g in delete.groups)
        self._meters_on[datapath.id].update(m.meter_id for m in add.meters)
        self._meters_on[datapath.id].difference_update(m.meter_id for m in delete.meters)
        self._write_queues(datapath, delete.queues, remove=True)

    def _messages(self, datapath: Any, add: RuleSet, delete: RuleSet) -> list[Any]:
        known, meters = self._groups_on[datapath.id], self._meters_on[datapath.id]
        messages = [
            of13.meter_mod(datapath, m, "modify" if m.meter_id in meters else "add")
            for m in add.meters
        ]
        messages += [
            of13.group_mod(datapath, g, "modify" if g.group_id in known else "add")
            for g in add.groups
        ]
        messages += [of13.flow_mod(datapath, f) for f in add.flows]
        messages += [of13.flow_delete(datapath, f) for f in delete.flows]
        messages += [of13.group_mod(datapath, None, "delete", g.group_id) for g in delete.groups]
        messages += [of13.meter_delete(datapath, m.meter_id) for m in delete.meters]
        return messages

    def _send_batch(self, datapath: Any, messages: list[Any]) -> None:
        if not messages:
            return
        errors: list[str] = []
        keys = []
        for msg in messages:
            datapath.set_xid(msg)
            keys.append((datapath.id, msg.xid))
        with self._state:
            for key in keys:
                self._batch_errors[key] = errors
        try:
            for msg in messages:
                datapath.send_msg(msg)
            self._request(datapath, datapath.ofproto_parser.OFPBarrierRequest(datapath))
        finally:
            with self._state:
                for key in keys:
                    self._batch_errors.pop(key, None)
        if errors:
            raise SouthboundError(self.switch_name(datapath.id), "; ".join(errors))
