"""Paths through the topology; a path names its links, since links may be parallel."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from braid.core.model.topology import Hop, Topology


@dataclass(frozen=True, slots=True)
class Path:
    nodes: tuple[str, ...]
    links: tuple[str, ...]

    @staticmethod
    def from_hops(src: str, hops: Sequence[Hop]) -> Path:
        return Path((src, *(h.to for h in hops)), tuple(h.link for h in hops))

    def directions(self, topology: Topology) -> Iterator[tuple[str, bool]]:
        """Each link with True when the path crosses it from its `a` end to its `b` end."""
        for node, link_id in zip(self.nodes, self.links, strict=False):
            yield link_id, topology.links[link_id].a == node

    def latency_ms(self, topology: Topology) -> float:
        return sum(topology.links[link].latency_ms for link in self.links)

    def as_dict(self) -> dict[str, list[str]]:
        return {"nodes": list(self.nodes), "links": list(self.links)}


def path_problems(topology: Topology, path: Path, src: str, dst: str) -> list[str]:
    """Why `path` is not a simple src -> dst path over existing links (empty when it is)."""
    problems: list[str] = []
    if len(path.nodes) != len(path.links) + 1:
        problems.append("a path needs exactly one more node than links")
        return problems
    if path.nodes[0] != src or path.nodes[-1] != dst:
        problems.append(f"path runs {path.nodes[0]}->{path.nodes[-1]}, not {src}->{dst}")
    if len(set(path.nodes)) != len(path.nodes):
        problems.append(f"path repeats a node: {'-'.join(path.nodes)}")
    for here, there, link_id in zip(path.nodes, path.nodes[1:], path.links, strict=False):
        link = topology.links.get(link_id)
        if link is None:
            problems.append(f"unknown link {link_id!r}")
        elif {link.a, link.b} != {here, there}:
            problems.append(f"link {link_id!r} does not join {here} and {there}")
    return problems
