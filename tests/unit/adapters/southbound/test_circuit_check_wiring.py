"""Where the circuit check is offered (bootstrap) and how `braid show` states its result."""

from __future__ import annotations

from pathlib import Path

import pytest

from braid.adapters.southbound.controller_stats import ControllerStats
from braid.adapters.southbound.ofctl_stats import OfctlStats
from braid.adapters.southbound.switch_stats import StatsFleet
from braid.adapters.wiring_files import SouthboundConfig, SwitchAccess
from braid.app.provisioning.ports import SwitchError
from braid.bootstrap.provisioning import circuit_checker_for
from braid.cli.client_views import provisioning
from tests.unit.core.rules.scenarios import two_path_scenario

SINCE = "2030-03-17T17:46:40Z"


def config(drivers: dict[str, str], token_file: Path | None = None) -> SouthboundConfig:
    ports = two_path_scenario().ports
    access = {s: SwitchAccess(d, s if d == "direct" else None) for s, d in drivers.items()}
    api = "unix:/nonexistent/api.sock"
    return SouthboundConfig(
        ports, {"s1": "h1", "s3": "h2"}, access, controller_api=api,
        controller_token_file=None if token_file is None else str(token_file),
    )  # fmt: skip


def test_every_switch_is_checked_through_its_own_driver(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("t0ken\n")
    drivers = {"s1": "direct", "s2": "controller", "s3": "direct", "s4": "controller"}
    fleet = circuit_checker_for(config(drivers, tmp_path / "token")).stats
    assert isinstance(fleet, StatsFleet)
    ofctl, controller = fleet.by_switch["s1"], fleet.by_switch["s2"]
    assert fleet.by_switch["s3"] is ofctl and fleet.by_switch["s4"] is controller
    assert isinstance(ofctl, OfctlStats) and ofctl.bridges == {"s1": "s1", "s3": "s3"}
    assert isinstance(controller, ControllerStats)
    assert controller.client.token == "t0ken"
    assert controller.dpids == {"s1": 1, "s2": 2, "s3": 3, "s4": 4}


def test_a_switch_outside_the_wiring_is_named() -> None:
    with pytest.raises(SwitchError, match="switch s9: not in the wiring"):
        StatsFleet({}).flow_counts("s9", 0, 0)


def test_braid_show_says_verified_or_where_the_probes_were_lost() -> None:
    installed = {"state": "installed", "since": SINCE}
    verified = {**installed, "verified": True, "check": "4 path directions verified"}
    assert provisioning(verified, "UTC") == f"installed, verified (since {provisioning_since()})"
    lost = {**installed, "verified": False, "check": "path 0 (VLAN 1) h1→h2: lost at s2"}
    shown = provisioning(lost, "UTC")
    assert shown is not None and shown.startswith("installed; path 0 (VLAN 1) h1→h2: lost at s2")
    assert provisioning(installed, "UTC") == f"installed (since {provisioning_since()})"


def provisioning_since() -> str:
    shown = provisioning({"state": "x", "since": SINCE}, "UTC")
    assert shown is not None
    return shown.removeprefix("x (since ").removesuffix(")")
