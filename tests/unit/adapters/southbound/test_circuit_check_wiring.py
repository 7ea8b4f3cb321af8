"""Where the circuit check is offered (bootstrap) and how `braid show` states its result."""

from __future__ import annotations

from braid.adapters.southbound.circuit_probe import OfctlCircuitProbe
from braid.adapters.wiring_files import SouthboundConfig, SwitchAccess
from braid.bootstrap.provisioning import circuit_checker_for
from braid.cli.client_views import provisioning
from tests.unit.core.rules.scenarios import two_path_scenario

SINCE = "2030-03-17T17:46:40Z"


def config(drivers: dict[str, str]) -> SouthboundConfig:
    ports = two_path_scenario().ports
    access = {s: SwitchAccess(d, s if d == "direct" else None) for s, d in drivers.items()}
    return SouthboundConfig(ports, {"s1": "h1", "s3": "h2"}, access)


def test_switches_all_driven_directly_offer_the_check() -> None:
    checker = circuit_checker_for(config(dict.fromkeys(("s1", "s2", "s3", "s4"), "direct")))
    assert isinstance(checker, OfctlCircuitProbe)
    assert checker.bridges == {"s1": "s1", "s2": "s2", "s3": "s3", "s4": "s4"}


def test_a_switch_behind_a_controller_means_no_check() -> None:
    drivers = {"s1": "direct", "s2": "controller", "s3": "direct", "s4": "direct"}
    assert circuit_checker_for(config(drivers)) is None


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
