"""braid's modules import one another without a cycle; each cycle found is named with its imports.

The graph is grimp's (the one import-linter checks the layers on): it counts
imports inside functions and under `TYPE_CHECKING` too, since a cycle hidden
in either still ties the modules together. A cycle is a strongly connected
component of more than one module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Set

import grimp
from hypothesis import given
from hypothesis import strategies as st

Edges = Mapping[str, Set[str]]


def import_cycles(edges: Edges) -> list[list[str]]:
    """Each strongly connected component of two or more modules, sorted (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> tuple[str, Iterator[str]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        return node, iter(sorted(edges.get(node, ())))

    for root in sorted(edges):
        if root in index:
            continue
        work = [visit(root)]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    found.append(_pop_component(stack, on_stack, node))
            elif child not in index:
                work.append(visit(child))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return sorted(c for c in found if len(c) > 1)


def _pop_component(stack: list[str], on_stack: set[str], root: str) -> list[str]:
    component = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        component.append(member)
        if member == root:
            return sorted(component)


def _describe(graph: grimp.ImportGraph, cycle: list[str]) -> str:
    """The cycle's modules, then each import between two of them, with its line."""
    members = set(cycle)
    lines = [", ".join(cycle)]
    for importer in cycle:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & members):
            details = graph.get_import_details(importer=importer, imported=imported)
            where = ", ".join(f"line {d['line_number']}" for d in details) or "line ?"
            lines.append(f"    {importer} -> {imported} ({where})")
    return "\n".join(lines)


def test_braid_has_no_import_cycle() -> None:
    graph = grimp.build_graph("braid", cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    cycles = import_cycles(edges)
    report = "\n".join(f"- {_describe(graph, cycle)}" for cycle in cycles)
    assert cycles == [], f"{len(cycles)} import cycle(s) in braid:\n{report}"


def test_each_cycle_is_found_once_and_nothing_else() -> None:
    edges = {
        "a": {"b"},
        "b": {"c", "d"},
        "c": {"a"},
        "d": {"e"},
        "e": {"d", "f"},
        "f": {"f"},  # a module naming itself is no cycle between modules
        "g": {"a"},
    }
    assert import_cycles(edges) == [["a", "b", "c"], ["d", "e"]]
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def _reaches(edges: Edges, start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


NAMES = st.sampled_from("abcdefgh")


@given(st.dictionaries(NAMES, st.frozensets(NAMES, max_size=3), max_size=8))
def test_the_cycles_are_the_modules_that_reach_each_other(edges: dict[str, frozenset[str]]) -> None:
    reach = {m: _reaches(edges, m) for m in edges}
    expected = {
        frozenset(m for m in edges if m == n or (m in reach[n] and n in reach[m])) for n in edges
    }
    assert {frozenset(c) for c in import_cycles(edges)} == {c for c in expected if len(c) > 1}
