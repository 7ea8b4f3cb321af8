"""Service settings: defaults, then a YAML config file, then BRAID_* environment variables."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import yaml

from braid.core.errors import InputError


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = "sqlite:///braid.db"
    topology_file: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    hold_seconds: int = 600
    max_body_bytes: int = 256 * 1024
    tick_seconds: float = 5.0


def load_settings(config: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from an optional config file and the environment (which wins)."""
    settings = Settings()
    if config is not None:
        settings = _merge(settings, _read_config(config), str(config))
    environ = os.environ if env is None else env
    from_env = {
        f.name: environ[f"BRAID_{f.name.upper()}"]
        for f in fields(Settings)
        if f"BRAID_{f.name.upper()}" in environ
    }
    return _merge(settings, from_env, "environment")


def _read_config(path: Path) -> Mapping[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError("config", f"cannot read {path}: {exc}") from exc
    if not isinstance(data, Mapping):
        raise InputError("config", f"{path} must hold a mapping of settings")
    return data


def _merge(settings: Settings, values: Mapping[str, Any], where: str) -> Settings:
    known = {f.name: f for f in fields(Settings)}
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if name not in known:
            raise InputError(name, f"unknown setting in {where}; known: {', '.join(known)}")
        changes[name] = _coerce(name, value, known[name].type, where)
    return replace(settings, **changes)


def _coerce(name: str, value: Any, kind: object, where: str) -> Any:
    try:
        if kind in ("int", int):
            return int(value)
        if kind in ("float", float):
            return float(value)
        return None if value in (None, "") else str(value)
    except (TypeError, ValueError) as exc:
        raise InputError(name, f"bad value {value!r} in {where}") from exc
