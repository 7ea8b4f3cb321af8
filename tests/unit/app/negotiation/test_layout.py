"""The negotiation package's modules import one another without a cycle: a run sees its
orchestrator only through `RunContext`."""

from __future__ import annotations

import grimp
import networkx as nx

PACKAGE = "braid.app.negotiation"


def test_no_module_of_the_negotiation_imports_itself_round_about() -> None:
    graph = grimp.build_graph("braid")  # counts TYPE_CHECKING and function-level imports too
    inside = {m for m in graph.modules if m.startswith(f"{PACKAGE}.")}
    edges = nx.DiGraph()
    edges.add_nodes_from(inside)
    for module in inside:
        edges.add_edges_from(
            (module, imported)
            for imported in graph.find_modules_directly_imported_by(module)
            if imported in inside
        )
    assert [sorted(c) for c in nx.strongly_connected_components(edges) if len(c) > 1] == []


def test_a_run_does_not_know_the_orchestrator() -> None:
    graph = grimp.build_graph("braid")
    assert f"{PACKAGE}.negotiator" not in graph.find_modules_directly_imported_by(f"{PACKAGE}.run")
