"""A site's fail-over action: put its border switch's rules for a path in, through a driver.

`direct` hands them to ovs-ofctl (seed 003's dpctl method), `controller` to
the site's own `braid controller` over its HTTP API (the ODL method); both
are braid's southbound drivers. The action only ever touches the one switch
its rule sets name: a site acts on its own border switch, never the far one.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from braid.adapters.southbound.codec import rule_set_from_json, rule_set_to_json
from braid.adapters.southbound.driver import SouthboundDriver, SouthboundError
from braid.core.errors import InputError
from braid.core.rules.model import FlowRule, Match, RuleSet

__all__ = ["ActionOutcome", "SiteAction", "extra_flows", "read_path_rules", "write_path_rules"]

EXTRA_PRIORITY = 100  # below every compiled rule: the extra entries never steer traffic


@dataclass(frozen=True, slots=True)
class ActionOutcome:
    to: str
    began: float
    done: float
    ok: bool
    error: str | None = None


class SiteAction:
    """Applies the rule set of the path asked for, with `extra` more entries (seed 003 Fig. 11)."""

    def __init__(
        self,
        driver: SouthboundDriver,
        paths: Mapping[str, RuleSet],
        extra: int = 0,
        wall: Callable[[], float] = time.time,
    ) -> None:
        switches = {r.switch for r in paths.values()}
        if len(switches) != 1:
            raise InputError("paths", f"rule sets for {sorted(switches)}: one site, one switch")
        self.switch = switches.pop()
        self._driver = driver
        self._paths = dict(paths)
        self._extra = extra
        self._wall = wall
        self._count = 0

    def close(self) -> None:
        """Let go of the driver's connections (the controller driver keeps one open)."""
        close = getattr(self._driver, "close", None)
        if callable(close):
            close()

    def __call__(self, to: str) -> ActionOutcome:
        began = self._wall()
        rules = self._paths.get(to)
        if rules is None:
            return ActionOutcome(to, began, began, False, f"no rules for path {to!r}")
        if self._extra:
            self._count += 1
            more = extra_flows(
                self._extra, rules.flows[0].cookie if rules.flows else 0, self._count
            )
            rules = dataclasses.replace(rules, flows=(*rules.flows, *more))
        try:
            self._driver.apply(rules)
        except SouthboundError as exc:
            return ActionOutcome(to, began, self._wall(), False, str(exc))
        return ActionOutcome(to, began, self._wall(), True)


def extra_flows(count: int, cookie: int, round_: int) -> tuple[FlowRule, ...]:
    """`count` entries matching addresses nobody uses (198.18/15, RFC 2544's benchmark range);
    new ones each round, so each fail-over writes them, as the seed's did."""
    base = (round_ % 2) * count
    return tuple(
        FlowRule(
            priority=EXTRA_PRIORITY,
            match=Match(
                eth_type=0x0800, ipv4_dst=f"198.18.{(base + k) // 250}.{(base + k) % 250 + 1}"
            ),
            actions=(),  # drop: nothing is ever sent there
            cookie=cookie,
        )
        for k in range(count)
    )


def write_path_rules(path: Path, rules: Mapping[str, RuleSet]) -> None:
    doc = {"paths": {name: rule_set_to_json(r) for name, r in rules.items()}}
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def read_path_rules(path: Path) -> dict[str, RuleSet]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(str(path), f"cannot read the rules: {exc}") from exc
    paths = doc.get("paths") if isinstance(doc, dict) else None
    if not isinstance(paths, dict) or len(paths) < 2:
        raise InputError(f"{path}.paths", "give a rule set for each of at least two paths")
    return {name: rule_set_from_json(body, f"{path}.paths.{name}") for name, body in paths.items()}
