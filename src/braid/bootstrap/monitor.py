"""`braid monitor`'s composition: the site's fail-over action from its rules and its driver."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from braid.adapters.failover.actions import SiteAction, read_path_rules
from braid.adapters.failover.service_action import ServiceAction
from braid.adapters.southbound.controller import ControllerDriver
from braid.adapters.southbound.direct import OfctlDriver
from braid.adapters.southbound.driver import SouthboundDriver
from braid.core.errors import InputError

__all__ = ["ACTIONS", "ServiceTarget", "site_action"]

ACTIONS = ("none", "direct", "controller", "service")


@dataclass(frozen=True, slots=True)
class ServiceTarget:
    """Where the `service` action posts link states: braid serve, a monitor token, the link."""

    url: str | None = None
    token: str | None = None
    link: str | None = None


def site_action(
    kind: str,
    rules: Path | None,
    paths: tuple[str, ...],
    *,
    bridge: str | None = None,
    controller: str | None = None,
    extra: int = 0,
    service: ServiceTarget | None = None,
    controller_token: str | None = None,
) -> SiteAction | ServiceAction | None:
    """`direct` (ovs-ofctl on the site's bridge), `controller` (the site's braid controller),
    or `service` (tell braid serve the watched link's state; it moves the reservations).

    Errors name the option to fix (`--rules`, `--controller`, …); nothing is started.
    """
    if kind not in ACTIONS:
        raise InputError("--action", f"{kind!r} must be one of {', '.join(ACTIONS)}")
    if kind == "none":
        return None
    if kind == "service":
        return _service_action(service or ServiceTarget(), paths)
    if rules is None:
        raise InputError("--rules", f"the {kind} action needs the rule sets of each path")
    path_rules = read_path_rules(rules)
    missing = [p for p in paths if p not in path_rules]
    if missing:
        raise InputError("--rules", f"{rules} has no rule set for path {missing[0]!r} (--paths)")
    if kind == "controller" and controller is None:
        raise InputError("--controller", "the controller action needs braid controller's address")
    switches = {r.switch for r in path_rules.values()}
    if len(switches) != 1:
        raise InputError("--rules", f"rule sets for {sorted(switches)}: one site, one switch")
    switch = switches.pop()
    driver: SouthboundDriver
    if kind == "direct":
        driver = OfctlDriver({switch: bridge or switch})
    else:
        assert controller is not None
        driver = ControllerDriver(controller, timeout=5.0, token=controller_token)
    return SiteAction(driver, path_rules, extra)


def _service_action(target: ServiceTarget, paths: tuple[str, ...]) -> ServiceAction:
    for name, value in (("--service", target.url), ("--token", target.token),
                        ("--link", target.link)):  # fmt: skip
        if not value:
            raise InputError(name, f"the service action needs {name}")
    assert target.url and target.token and target.link
    return ServiceAction.connect(target.url, target.token, target.link, paths[0])
