"""The orchestrator's domain graph, built from what the agents publish and kept fresh.

Each agent publishes its domain's abstract view (`DomainAgent.View`); the
graph asks every agent it knows of (`ViewSource`), keeps the last part each
domain published, and rebuilds the global view when a part is new or its
version changed. Those who use the view (the orchestrator, its agent pool)
hear of every rebuild through `listeners`. A domain whose agent does not
answer keeps the part it published last (or, with a single topology file,
the file's part until its agent first answers).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from braid.core.negotiation.published import DomainPart, MergedView, merge_parts

__all__ = ["DomainGraph", "Listener", "Published", "ViewSource"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Published:
    """One agent's answer: its part, or why there is none."""

    address: str
    part: DomainPart | None
    error: str = ""


class ViewSource(Protocol):
    def fetch(self) -> Sequence[Published]:
        """Ask every agent for its view (together; each with a deadline)."""
        ...


Listener = Callable[[MergedView, Mapping[str, str]], None]


class DomainGraph:
    """Parts by domain, the merged view, and who to tell when it changes."""

    def __init__(
        self, source: ViewSource, seed: Mapping[str, tuple[str, DomainPart]] | None = None
    ) -> None:
        self._source = source
        # domain -> (agent address, part); `seed` (from a single file) until an agent answers.
        self._parts: dict[str, tuple[str, DomainPart]] = dict(seed or {})
        self.heard: set[str] = set()  # domains whose part came from their agent
        self.listeners: list[Listener] = []
        self._lock = threading.Lock()
        self.merged = self._merge()

    @property
    def addresses(self) -> dict[str, str]:
        return {d: address for d, (address, _) in self._parts.items()}

    def refresh(self) -> bool:
        """Ask the agents; rebuild and tell the listeners if anything changed."""
        answers = self._source.fetch()
        with self._lock:
            changed = False
            for answer in answers:
                if answer.part is None:
                    log.debug("no view from %s: %s", answer.address, answer.error)
                    continue
                changed |= self._take(answer.address, answer.part)
            if not changed:
                return False
            self.merged = self._merge()
            merged, addresses = self.merged, self.addresses
            for listener in self.listeners:
                listener(merged, addresses)
        return True

    def _take(self, address: str, part: DomainPart) -> bool:
        self.heard.add(part.domain)
        known = self._parts.get(part.domain)
        if known is not None and known[0] == address and known[1].version == part.version:
            return False
        if known is not None and known[0] != address:
            log.warning("domain %s now answers at %s (was %s)", part.domain, address, known[0])
        self._parts[part.domain] = (address, part)
        return True

    def _merge(self) -> MergedView:
        merged = merge_parts((part for _, part in self._parts.values()), self.addresses)
        for link in merged.disagreements:
            log.warning("link %s: its domains publish it differently; the owner's is used", link)
        return merged
