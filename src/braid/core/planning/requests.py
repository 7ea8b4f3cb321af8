"""Requests to the planner, validated field by field (the `braid plan` contract, v1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from braid.core.errors import InputError
from braid.core.model.instants import parse_instant, readable_instant
from braid.core.model.topology import Topology
from braid.core.model.units import (
    FOREVER,
    MAX_INSTANT,
    parse_bandwidth,
    parse_duration,
    parse_volume,
)
from braid.core.volume import OBJECTIVES, Objective

Mode = Literal["fixed", "earliest", "max-bandwidth", "all-slots", "tenant", "volume", "quickest"]
Split = Literal["flow", "packet"]
MODES: Final = ("fixed", "earliest", "max-bandwidth", "all-slots", "tenant", "volume", "quickest")
VOLUME_MODES: Final = ("volume", "quickest")
SPLITS: Final = ("flow", "packet")
MAX_PATHS_LIMIT: Final = 16

_COMMON: Final = {"id", "op", "src", "dst", "mode", "directional"}
_SPLITTING: Final = {"max_paths", "split"}
_MODE_FIELDS: Final[dict[str, tuple[set[str], set[str]]]] = {
    # mode: (required, optional); a tenant's sub-paths are chosen by the
    # tenant allocator, so it does not split.
    "fixed": ({"bandwidth", "start", "end"}, _SPLITTING),
    "earliest": ({"bandwidth", "duration", "not_before"}, {"not_after"} | _SPLITTING),
    "max-bandwidth": ({"start", "end"}, {"reserve"} | _SPLITTING),
    "all-slots": ({"bandwidth", "duration", "window_start", "window_end"}, _SPLITTING),
    "tenant": ({"bandwidth", "tenant", "start"}, {"end", "main_path"}),
    # A volume's profile may change paths from step to step; `split` has no
    # meaning there (each step is split per flow). `quickest` answers only.
    "volume": ({"volume", "not_before"}, {"deadline", "max_rate", "max_paths", "objective"}),
    "quickest": ({"volume", "not_before"}, {"max_rate", "max_paths"}),
}


@dataclass(frozen=True, slots=True)
class Request:
    id: str
    mode: Mode
    src: str
    dst: str
    bandwidth: int = 0
    start: int = 0
    end: int = 0
    duration: int = 0
    not_before: int = 0
    not_after: int | None = None
    reserve: bool = False
    tenant: str = ""
    main_path: tuple[str, ...] | None = None
    max_paths: int = 1
    split: Split = "flow"
    directional: bool = False
    volume: int = 0  # bytes, volume and quickest modes
    deadline: int | None = None
    max_rate: int | None = None
    objective: Objective = "earliest"

    @property
    def symmetric(self) -> bool:
        return not self.directional


@dataclass(frozen=True, slots=True)
class Release:
    id: str


def parse_request(
    data: object, topology: Topology, *, zone: str | None = None, now: int | None = None
) -> Request | Release:
    """Validate one request object; raises InputError naming the first bad field.

    Instants without an offset are read in `zone` (`braid plan --tz`), and day
    words (`friday 17:00`, `now+2h`) against `now`, both passed in by the caller.
    """
    if not isinstance(data, Mapping):
        raise InputError("", "each line must be a JSON object")
    request_id = data.get("id")
    if not isinstance(request_id, str) or not request_id.strip():
        raise InputError("id", "required: a non-empty string that names the request")
    op = data.get("op", "reserve")
    if op == "release":
        _reject_unknown(data, {"id", "op"})
        return Release(request_id)
    if op != "reserve":
        raise InputError("op", f"must be 'reserve' or 'release', got {op!r}")
    mode = data.get("mode", "fixed")
    if mode not in MODES:
        raise InputError("mode", f"must be one of {', '.join(MODES)}; got {mode!r}")
    required, optional = _MODE_FIELDS[mode]
    _reject_unknown(data, _COMMON | required | optional, mode)
    for name in sorted(required):
        if name not in data:
            raise InputError(name, f"required in {mode} mode")
    return _build(data, request_id, mode, topology, _Reading(zone, now))


@dataclass(frozen=True, slots=True)
class _Reading:
    """How a request's instants are read: the default zone, and the current time."""

    zone: str | None = None
    now: int | None = None

    def instant(self, value: object, field: str) -> int:
        return parse_instant(value, field, zone=self.zone, now=self.now)


def _reject_unknown(data: Mapping[str, Any], allowed: set[str], mode: str = "") -> None:
    for name in sorted(data):
        if name not in allowed:
            where = f" in {mode} mode" if mode else ""
            raise InputError(name, f"unknown or not used{where}")


def _build(
    data: Mapping[str, Any], request_id: str, mode: Mode, topology: Topology, reading: _Reading
) -> Request:
    src, dst = _node(data, "src", topology), _node(data, "dst", topology)
    if src == dst:
        raise InputError("dst", "must differ from src")
    fields: dict[str, Any] = {"id": request_id, "mode": mode, "src": src, "dst": dst}
    if "bandwidth" in data:
        fields["bandwidth"] = parse_bandwidth(data["bandwidth"], "bandwidth")
    fields.update(_times(data, mode, reading))
    fields.update(_options(data, topology, src, dst, mode))
    if mode in VOLUME_MODES:
        fields.update(_volume(data, fields))
    return Request(**fields)


def _volume(data: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The volume fields; `_times` has read `not_before` and `deadline` already."""
    out: dict[str, Any] = {"volume": parse_volume(data["volume"], "volume")}
    if data.get("max_rate") is not None:
        out["max_rate"] = parse_bandwidth(data["max_rate"], "max_rate")
    objective = data.get("objective", "earliest")
    if objective not in OBJECTIVES:
        raise InputError("objective", f"must be one of {', '.join(OBJECTIVES)}; got {objective!r}")
    if objective == "flattest" and fields.get("deadline") is None:
        raise InputError("deadline", "required for objective flattest: the time to spread over")
    out["objective"] = objective
    return out


def _node(data: Mapping[str, Any], name: str, topology: Topology) -> str:
    value = data.get(name)
    if not isinstance(value, str):
        raise InputError(name, "required: a node id")
    topology.require_node(value, name)
    return value


def _times(data: Mapping[str, Any], mode: Mode, reading: _Reading) -> dict[str, Any]:
    got = {
        k: (parse_duration if k == "duration" else reading.instant)(data[k], k)
        for k in _TIME_FIELDS
        if data.get(k) is not None
    }
    if "duration" in got and got["duration"] <= 0:
        raise InputError("duration", "must be a positive number of seconds")
    if got.get("not_before", 0) + got.get("duration", 0) > MAX_INSTANT:
        raise InputError("duration", "would end after 9999-12-31T23:59:59Z")
    if mode in ("fixed", "max-bandwidth"):
        _ordered(got, "start", "end")
    elif mode == "tenant":
        got.setdefault("end", FOREVER)
        _ordered(got, "start", "end")
    elif mode == "earliest" and "not_after" in got:
        if got["not_after"] < got["not_before"] + got["duration"]:
            raise InputError("not_after", "leaves no room: must be at least not_before + duration")
    elif mode == "volume" and "deadline" in got:
        _ordered(got, "not_before", "deadline")
    elif mode == "all-slots":
        _ordered(got, "window_start", "window_end")
        if got["window_end"] - got["window_start"] < got["duration"]:
            raise InputError("window_end", "the window is shorter than the duration")
        got["start"], got["end"] = got.pop("window_start"), got.pop("window_end")
    if "reserve" in data:
        got["reserve"] = _flag(data, "reserve")
    return got


_TIME_FIELDS: Final = (
    "start", "end", "duration", "not_before", "not_after", "window_start", "window_end",
    "deadline",
)  # fmt: skip


def _ordered(got: dict[str, int], first: str, last: str) -> None:
    if got[last] <= got[first]:
        start, end = readable_instant(got[first]), readable_instant(got[last])
        raise InputError(last, f"must be after {first} ({start}), got {end}")


def _options(
    data: Mapping[str, Any], topology: Topology, src: str, dst: str, mode: Mode
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    # A volume moves fastest over every path there is, so it asks for all by default.
    max_paths = data.get("max_paths", MAX_PATHS_LIMIT if mode in VOLUME_MODES else 1)
    if isinstance(max_paths, bool) or not isinstance(max_paths, int):
        raise InputError("max_paths", "must be an integer")
    if not 1 <= max_paths <= MAX_PATHS_LIMIT:
        raise InputError("max_paths", f"must be between 1 and {MAX_PATHS_LIMIT}")
    out["max_paths"] = max_paths
    split = data.get("split", "flow")
    if split not in SPLITS:
        raise InputError("split", f"must be 'flow' or 'packet', got {split!r}")
    out["split"] = split
    if "directional" in data:
        out["directional"] = _flag(data, "directional")
    if "tenant" in data:
        tenant = data["tenant"]
        if not isinstance(tenant, str) or not tenant:
            raise InputError("tenant", "must be a non-empty string")
        out["tenant"] = tenant
    if data.get("main_path") is not None:
        out["main_path"] = _main_path(data["main_path"], topology, src, dst)
    return out


def _main_path(value: object, topology: Topology, src: str, dst: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise InputError("main_path", "must be a list of node ids")
    for node in value:
        topology.require_node(node, "main_path")
    if len(value) < 2 or value[0] != src or value[-1] != dst:
        raise InputError("main_path", f"must run from src {src!r} to dst {dst!r}")
    return tuple(value)


def _flag(data: Mapping[str, Any], name: str) -> bool:
    value = data[name]
    if not isinstance(value, bool):
        raise InputError(name, f"must be true or false, got {value!r}")
    return value
