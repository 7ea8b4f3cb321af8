"""The reservation service's store and mirror are read inside app/reservations/ only.

Outside it, modules go through the service's methods or hand its `books`
to a reservation module; none reaches into the store or the mirror.
"""

from __future__ import annotations

import ast
from pathlib import Path

import braid
from braid.app.reservations.books import Books
from braid.app.reservations.memory_store import MemoryRepository
from braid.app.reservations.service import ReservationService

SRC = Path(braid.__file__).resolve().parent
HOUSE = SRC / "app" / "reservations"
INSIDE = frozenset({"store", "mirror"})


def reads_of_the_books_insides(tree: ast.AST) -> list[int]:
    """Lines reading `<x>.books.store` or `<x>.books.mirror`."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in INSIDE
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "books"
    ]


def test_no_module_outside_the_house_reads_the_store_or_the_mirror() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if HOUSE in path.parents:
            continue
        lines = reads_of_the_books_insides(ast.parse(path.read_text(), str(path)))
        found += [f"{path.relative_to(SRC)}:{line}" for line in lines]
    assert found == []


def test_the_checker_sees_such_a_read() -> None:
    tree = ast.parse("def f(service):\n    return service.books.store.get('x')\n")
    assert reads_of_the_books_insides(tree) == [2]


def test_the_service_keeps_no_store_or_mirror_attribute_of_its_own() -> None:
    service = ReservationService(MemoryRepository(), clock=lambda: 0)
    assert isinstance(service.books, Books)
    for name in ("repo", "mirror", "live"):
        assert not hasattr(service, name), name
