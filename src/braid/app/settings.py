"""Service settings: defaults, then a YAML config file, then BRAID_* environment variables."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import yaml

from braid.core.errors import InputError
from braid.core.policy import Policy, policy_from_dict

DEFAULT_HORIZON_DAYS = 365


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = "sqlite:///braid.db"
    topology_file: str | None = None
    host: str = "127.0.0.1"
    port: int = 8080
    hold_seconds: int = 600
    max_body_bytes: int = 256 * 1024
    tick_seconds: float = 5.0
    # SQLite only: "full" syncs the WAL at every commit; "normal" at
    # checkpoints (faster; a power cut may lose the last commits, a crash not).
    sqlite_synchronous: str = "full"
    # Provisioning: a wiring file (switches, ports, hosts) makes braid program
    # the switches; rules go in `provision_lead_seconds` before a reservation
    # starts, and every switch is read back every `reconcile_seconds`.
    southbound_file: str | None = None
    provision_lead_seconds: int = 5
    reconcile_seconds: float = 30.0
    # Hold each reservation to its rate on the wire (meters at the ingress edge,
    # queues on every port its paths leave by); off for switches without them.
    enforce_rates: bool = True
    # Delivery: with provisioning, every installed reservation's counters are
    # read every `delivery_seconds`; the last `delivery_samples` are kept.
    delivery_seconds: float = 5.0
    delivery_samples: int = 120
    # Fail-over: a protected reservation moved to its standby by a link going
    # down goes back to its primary when the link comes up.
    failback: bool = True
    # braid's own log lines on stderr: "text" or "json" (one object per line).
    log_format: str = "text"
    # TLS for the REST API (both or neither): uvicorn serves HTTPS itself.
    tls_cert: str | None = None
    tls_key: str | None = None
    # NSI CS 2.0 provider: serve /NSI/services/CS2 for this domain's STPs
    # (urn:ogf:network:DOMAIN:topology:NODE?vlan=N); `nsi_url` is the base URL
    # the discovery document gives requesters (default: http://host:port).
    nsi_domain: str | None = None
    nsi_url: str | None = None
    # /metrics for anyone, without a token (else: operator and monitor tokens).
    metrics_open: bool = False
    # NSI requesters: the file naming, per client certificate, the requester
    # NSA ids it may act as and their replyTo endpoints (docs/nsi.md); and
    # the CA file that signs those certificates (the server then asks every
    # client for one).
    nsi_requesters: str | None = None
    tls_client_ca: str | None = None
    # The command line's --insecure only: NSI without client certificates or
    # an allow-list, and /metrics open, with a warning at every start.
    insecure: bool = False
    # Bookings must end within this many days of now, unless a policy rule
    # (`horizon`) of the role or user says otherwise; 0: no such default.
    booking_horizon_days: int = DEFAULT_HORIZON_DAYS
    # What each role and user may book (config file only: a nested mapping).
    policy: Policy = field(default_factory=Policy)

    def booking_policy(self) -> Policy:
        """The policy the service applies: `policy`, with the default horizon beneath it."""
        horizon = self.booking_horizon_days * 86400 if self.booking_horizon_days else None
        return replace(self.policy, horizon=horizon)


def load_settings(config: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from an optional config file and the environment (which wins).

    Raises InputError naming the setting (and where it came from) for a
    value that is not allowed, e.g. `tick_seconds: 0`.
    """
    settings = Settings()
    if config is not None:
        values = dict(_read_config(config))
        policy = policy_from_dict(values.pop("policy", None))
        settings = replace(_merge(settings, values, str(config)), policy=policy)
    environ = os.environ if env is None else env
    from_env = {
        f.name: environ[f"BRAID_{f.name.upper()}"]
        for f in fields(Settings)
        if f"BRAID_{f.name.upper()}" in environ and f.name not in NESTED | COMMAND_LINE_ONLY
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
        if name not in known or name in COMMAND_LINE_ONLY:
            names = ", ".join(k for k in known if k not in COMMAND_LINE_ONLY)
            hint = " (--insecure is a command-line option only)" if name == "insecure" else ""
            raise InputError(name, f"unknown setting in {where}{hint}; known: {names}")
        changes[name] = _coerce(name, value, known[name].type, where)
        problem = value_problem(name, changes[name])
        if problem:
            raise InputError(name, f"{problem}, not {value!r} (in {where})")
    return replace(settings, **changes)


def value_problem(name: str, value: Any) -> str:
    """Why `value` is not allowed for setting `name` (empty when it is)."""
    if name == "sqlite_synchronous" and value not in SQLITE_SYNCHRONOUS:
        return f"must be one of {', '.join(SQLITE_SYNCHRONOUS)}"
    if name == "log_format" and value not in LOG_FORMATS:
        return f"must be one of {', '.join(LOG_FORMATS)}"
    limits = LIMITS.get(name)
    if limits is None:
        return ""
    low, high, what = limits
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be {what}"
    if value < low or value > high:
        return f"must be {what}"
    return ""


def check_settings(settings: Settings, where: str = "the command line") -> None:
    """Raise InputError naming the first setting whose value is not allowed."""
    for f in fields(Settings):
        value = getattr(settings, f.name)
        problem = value_problem(f.name, value)
        if problem:
            raise InputError(f.name, f"{problem}, not {value!r} (in {where})")
    if (settings.tls_cert is None) != (settings.tls_key is None):
        missing = "tls_key" if settings.tls_key is None else "tls_cert"
        raise InputError(missing, f"TLS needs both tls_cert and tls_key; {missing} is missing")
    if settings.tls_client_ca is not None and settings.tls_cert is None:
        raise InputError("tls_client_ca", "client certificates need TLS: give tls_cert and tls_key")


SQLITE_SYNCHRONOUS = ("full", "normal")
LOG_FORMATS = ("text", "json")
# Settings that only a config file can give (not one environment variable).
NESTED = frozenset({"policy"})
# Settings that only the command line can give: opening braid up is a choice
# made where it is started, never one left behind in a file or environment.
COMMAND_LINE_ONLY = frozenset({"insecure"})

# Inclusive bounds. The tick must be positive (0 would spin the ticker) and
# short enough that expired holds are recorded while they still matter.
LIMITS: dict[str, tuple[float, float, str]] = {
    "port": (0, 65535, "a port number from 0 to 65535"),
    "hold_seconds": (1, 366 * 86400, "a whole number of seconds from 1 to a year"),
    "booking_horizon_days": (
        0,
        36525,
        "a whole number of days from 0 (no default horizon) to 36525 (100 years)",
    ),
    "max_body_bytes": (1, 1 << 30, "a number of bytes from 1 to 1 GiB"),
    "tick_seconds": (0.01, 86400, "a number of seconds from 0.01 to 86400"),
    "provision_lead_seconds": (0, 86400, "a whole number of seconds from 0 to a day"),
    "reconcile_seconds": (1, 86400, "a number of seconds from 1 to 86400"),
    "delivery_seconds": (1, 3600, "a number of seconds from 1 to 3600"),
    "delivery_samples": (2, 100_000, "a whole number from 2 to 100000"),
}


def _coerce(name: str, value: Any, kind: object, where: str) -> Any:
    if kind in ("bool", bool):
        return _flag(name, value, where)
    try:
        if kind in ("int", int):
            return int(value)
        if kind in ("float", float):
            return float(value)
        return None if value in (None, "") else str(value)
    except (TypeError, ValueError) as exc:
        raise InputError(name, f"bad value {value!r} in {where}") from exc


def _flag(name: str, value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "on", "1"):
        return True
    if text in ("false", "no", "off", "0"):
        return False
    raise InputError(name, f"must be true or false, not {value!r} (in {where})")
