"""Provisioning for `braid serve`: wiring file, drivers, store and loop, put together."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from braid.adapters.southbound.api_token import TokenFileError, read_token_file
from braid.adapters.southbound.circuit_probe import CircuitProbe
from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.controller_stats import ControllerStats
from braid.adapters.southbound.direct import OfctlDriver, ofctl_runner
from braid.adapters.southbound.driver import SouthboundDriver
from braid.adapters.southbound.fleet import DriverTables
from braid.adapters.southbound.ofctl_stats import OfctlStats
from braid.adapters.southbound.switch_stats import StatsFleet
from braid.adapters.southbound.tc_queues import TcQueues
from braid.adapters.store import SqlRepository
from braid.adapters.store.provisioning import SqlProvisioningStore
from braid.adapters.wiring_files import SouthboundConfig, load_wiring
from braid.app.ports import Repository
from braid.app.provisioning.memory import MemoryProvisioningStore
from braid.app.provisioning.ports import ProvisioningMetrics, ProvisioningStore
from braid.app.provisioning.provisioner import Provisioner, Wiring
from braid.app.provisioning.runner import ProvisioningLoop
from braid.app.reservations.service import ReservationService
from braid.app.settings import Settings
from braid.core.errors import InputError

__all__ = [
    "circuit_checker_for",
    "controller_client",
    "drivers_for",
    "provisioning_store",
    "start_provisioning",
    "switch_stats_for",
]


def provisioning_store(repo: Repository) -> ProvisioningStore:
    """Provisioning states beside the reservations: in the same database when there is one."""
    if isinstance(repo, SqlRepository):
        return SqlProvisioningStore(repo.engine)
    return MemoryProvisioningStore()


def start_provisioning(
    service: ReservationService,
    repo: Repository,
    store: ProvisioningStore,
    settings: Settings,
    metrics: ProvisioningMetrics | None = None,
) -> ProvisioningLoop:
    """A running provisioning loop for `settings.southbound_file`; it wakes on every change."""
    assert settings.southbound_file is not None
    config = load_wiring(Path(settings.southbound_file), service.topology)
    tables = DriverTables(
        drivers_for(config), {s: p.dpid for s, p in config.ports.switches.items()}
    )
    provisioner = Provisioner(
        repo,
        store,
        tables,
        Wiring(config.ports, config.host_at, enforce=settings.enforce_rates),
        lambda: service.topology,
        holder=f"{socket.gethostname()}:{os.getpid()}",
        lead=settings.provision_lead_seconds,
        checker=circuit_checker_for(config),
    )
    loop = ProvisioningLoop(
        provisioner,
        service.clock,
        reconcile_every=settings.reconcile_seconds,
        metrics=metrics,
    )
    service.on_change.append(loop.wake)
    loop.start()
    return loop


def circuit_checker_for(config: SouthboundConfig) -> CircuitProbe:
    """The circuit check after each install: probes injected and counters read on each
    switch through its own driver (ovs-ofctl, or the controller's API)."""
    return CircuitProbe(switch_stats_for(config), config.ports)


def switch_stats_for(config: SouthboundConfig) -> StatsFleet:
    """Counters and packet-outs of every switch of the wiring, each through its driver."""
    dpids = {s: p.dpid for s, p in config.ports.switches.items()}
    runner = ofctl_runner(config.rundir)
    return StatsFleet(
        _by_driver(
            config,
            lambda bridges: OfctlStats(bridges, runner),
            lambda client: ControllerStats(client, dpids),
        )
    )


def drivers_for(config: SouthboundConfig) -> dict[str, SouthboundDriver]:
    """A driver for each switch of the wiring, as its `driver:` says."""
    runner = ofctl_runner(config.rundir)
    queues = TcQueues(netns=config.netns)
    return _by_driver(
        config, lambda bridges: OfctlDriver(bridges, runner, queues=queues), lambda client: client
    )


_T = TypeVar("_T")


def _by_driver(
    config: SouthboundConfig,
    direct: Callable[[dict[str, str]], _T],
    controller: Callable[[ControllerDriver], _T],
) -> dict[str, _T]:
    """For each switch, what `direct` makes of the direct switches' bridges, or what
    `controller` makes of a client of the wiring's controller (one each, shared)."""
    bridges = {s: a.bridge for s, a in config.access.items() if a.driver == "direct" and a.bridge}
    found: dict[str, _T] = {}
    if bridges:
        found.update(dict.fromkeys(bridges, direct(bridges)))
    controlled = [s for s, a in config.access.items() if a.driver == "controller"]
    if controlled:
        found.update(dict.fromkeys(controlled, controller(controller_client(config))))
    return found


def controller_client(config: SouthboundConfig) -> ControllerDriver:
    """A client of the wiring's `braid controller`, sending the token of its token file."""
    assert config.controller_api is not None  # checked when the file was read
    token = None
    if config.controller_token_file is not None:
        try:
            token = read_token_file(config.controller_token_file)
        except TokenFileError as exc:
            raise InputError("drivers.controller.token_file", str(exc)) from exc
    return ControllerDriver(config.controller_api, token=token)
