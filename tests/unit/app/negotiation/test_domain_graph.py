"""The orchestrator's domain graph follows what the agents publish (a fake view source)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from braid.app.negotiation.domain_graph import DomainGraph, Published
from braid.core.negotiation.domains import MultiDomainNetwork, global_view_from_dict
from braid.core.negotiation.published import DomainPart, MergedView, domain_part

EXAMPLE = Path(__file__).resolve().parents[4] / "src" / "braid" / "examples" / "fig6a.yaml"
DATA = yaml.safe_load(EXAMPLE.read_text())
FIG6A = MultiDomainNetwork("fig6a", DATA, global_view_from_dict(DATA))


@dataclass
class FakeAgents:
    """Agents by address; an address mapped to None does not answer."""

    parts: dict[str, DomainPart | None] = field(default_factory=dict)

    def fetch(self) -> list[Published]:
        return [Published(a, p, "" if p else "UNAVAILABLE: down") for a, p in self.parts.items()]


def agents() -> FakeAgents:
    return FakeAgents(
        {f"10.0.0.{i}:1": domain_part(FIG6A, d) for i, d in enumerate(FIG6A.view.domains)}
    )


def test_the_graph_is_what_the_agents_publish() -> None:
    graph = DomainGraph(agents())
    assert graph.merged.view.domains == {}
    assert graph.refresh()
    assert graph.merged.view.links == FIG6A.view.links
    assert graph.addresses["site-a"] == "10.0.0.0:1"
    assert not graph.refresh()  # nothing changed: nothing rebuilt


def test_a_new_version_is_taken_and_the_listeners_hear_it() -> None:
    source = agents()
    graph = DomainGraph(source)
    graph.refresh()
    heard: list[MergedView] = []

    def listen(merged: MergedView, addresses: Mapping[str, str]) -> None:
        heard.append(merged)

    graph.listeners.append(listen)
    address = next(a for a, p in source.parts.items() if p and p.domain == "rn3")
    rn3 = source.parts[address]
    assert rn3 is not None and not rn3.visible
    source.parts[address] = replace(rn3, visible=True)
    assert graph.refresh()
    assert heard and heard[-1].view.domains["rn3"].visible


def test_a_silent_agent_keeps_what_it_published_last() -> None:
    source = agents()
    graph = DomainGraph(source)
    graph.refresh()
    address = next(a for a, p in source.parts.items() if p and p.domain == "re2")
    source.parts[address] = None
    assert not graph.refresh()
    assert "rn1-re2" in graph.merged.view.links


def test_a_files_parts_stand_in_until_an_agent_answers() -> None:
    seed = {d: (f"file:{d}", domain_part(FIG6A, d)) for d in FIG6A.view.domains}
    graph = DomainGraph(FakeAgents(), seed)
    assert graph.merged.view.links == FIG6A.view.links and not graph.heard
