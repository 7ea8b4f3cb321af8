"""Every braid module imports, and every name a module exports exists, once."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import braid

# Generated gRPC stubs and the os-ken application need their runtimes' own
# machinery at import (os-ken patches the standard library): importing them in
# the test process would change it for every other test.
SKIPPED = ("braid.adapters.southbound.osken_app", "braid.adapters.southbound.osken_main")


def _modules() -> list[str]:
    found = [
        info.name
        for info in pkgutil.walk_packages(braid.__path__, prefix="braid.")
        if not info.name.startswith(SKIPPED) and ".migrations." not in info.name
    ]
    return sorted(found)


@pytest.mark.parametrize("name", _modules())
def test_the_module_imports_and_exports_what_it_names(name: str) -> None:
    module: ModuleType = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        return
    assert len(exported) == len(set(exported)), f"{name}.__all__ names something twice"
    missing = [n for n in exported if not hasattr(module, n)]
    assert missing == [], f"{name}.__all__ names what it does not have: {missing}"


def test_every_package_says_what_it_is() -> None:
    undocumented = [
        info.name
        for info in pkgutil.walk_packages(braid.__path__, prefix="braid.")
        if info.ispkg
        and ".migrations" not in info.name
        and ".v1" not in info.name
        and not (importlib.import_module(info.name).__doc__ or "").strip()
    ]
    assert undocumented == []
