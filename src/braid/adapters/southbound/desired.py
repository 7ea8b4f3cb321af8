"""The desired state a driver keeps, and the difference that reconciles a switch to it."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from braid.adapters.southbound.codec import rule_set_from_json, rule_set_to_json
from braid.core.errors import InputError
from braid.core.rules.model import RuleSet, merge_rule_sets

__all__ = ["DesiredState"]


class DesiredState:
    """Per switch, the union of every rule set applied and not removed since."""

    def __init__(self) -> None:
        self._tables: dict[str, RuleSet] = {}

    def add(self, rule_set: RuleSet) -> None:
        current = self._tables.get(rule_set.switch)
        if current is None:
            self._tables[rule_set.switch] = merge_rule_sets([rule_set])[rule_set.switch]
            return
        # Later rules win on equal keys, as on a switch.
        kept = current.without(rule_set)
        self._tables[rule_set.switch] = merge_rule_sets([kept, rule_set])[rule_set.switch]

    def discard(self, rule_set: RuleSet) -> None:
        current = self._tables.get(rule_set.switch)
        if current is not None:
            self._tables[rule_set.switch] = current.without(rule_set)

    def put(self, table: RuleSet) -> None:
        """Set one switch's whole desired table (e.g. back to an earlier `get`)."""
        self._tables[table.switch] = table

    def get(self, switch: str, dpid: int) -> RuleSet:
        return self._tables.get(switch) or RuleSet(switch, dpid)

    def tables(self) -> Mapping[str, RuleSet]:
        return dict(self._tables)

    def save(self, path: Path) -> None:
        """Write the state as JSON, atomically (a crash leaves the old file or the new)."""
        data = [rule_set_to_json(r) for r in self._tables.values() if not r.empty]
        scratch = path.with_name(path.name + ".tmp")
        scratch.write_text(json.dumps({"version": 1, "rule_sets": data}))
        os.replace(scratch, path)

    @staticmethod
    def load(path: Path) -> DesiredState:
        """The state saved in `path`; errors name the file and the field."""
        try:
            data = json.loads(path.read_text())
            items = data["rule_sets"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(str(path), f"not a saved desired state: {exc}") from exc
        state = DesiredState()
        for i, item in enumerate(items):
            state.add(rule_set_from_json(item, f"{path}: rule_sets[{i}]"))
        return state
