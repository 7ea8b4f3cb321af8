"""Wire models: they document the API in /openapi.json and catch misspelt fields.

Validation of values stays in the service (one set of rules and messages for
REST, CLI and `braid plan`), so every request field is typed `Any` and only
*documented* with a JSON schema: pydantic must not coerce `true` into `1.0`
or a number into a string before the service has seen what the client sent.
Unknown fields are refused here, so a typo such as `bandwith` fails loudly.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

# -- request bodies ---------------------------------------------------------------

_INSTANT = {
    "type": "string",
    "format": "date-time",
    "description": "ISO 8601 with an offset, epoch seconds, or a local time: "
    "'2030-01-01 10:00 Europe/Paris', 'friday 17:00', 'now+2h' (without a zone, in "
    "the caller's tz setting, see PATCH /v1/me)",
    "examples": ["2030-01-01T10:00:00Z"],
}
_BANDWIDTH = {
    "anyOf": [{"type": "number"}, {"type": "string"}],
    "description": "Mbit/s as a number, or a string with a unit: '500M', '10G', '2.5Gbps'",
    "examples": [500, "10G"],
}

Instant = Annotated[Any, WithJsonSchema(_INSTANT)]
Bandwidth = Annotated[Any, WithJsonSchema(_BANDWIDTH)]
NodeId = Annotated[Any, WithJsonSchema({"type": "string", "description": "a node id"})]
Flag = Annotated[Any, WithJsonSchema({"type": "boolean"})]
Seconds = Annotated[
    Any,
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}],
            "description": "seconds, or a string with a unit: '90s', '15m', '2h', '1d'",
            "examples": [3600, "2h"],
        }
    ),
]
Count = Annotated[Any, WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 16})]
Mode = Annotated[
    Any,
    WithJsonSchema({"type": "string", "enum": ["fixed", "earliest", "max-bandwidth", "volume"]}),
]
Volume = Annotated[
    Any,
    WithJsonSchema(
        {
            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "string"}],
            "description": "bytes, or a string with a unit: '40TB', '500GiB' (not '40Tb': bits)",
            "examples": ["40TB", 500_000_000],
        }
    ),
]
Objective = Annotated[Any, WithJsonSchema({"type": "string", "enum": ["earliest", "flattest"]})]
Split = Annotated[Any, WithJsonSchema({"type": "string", "enum": ["flow", "packet"]})]
Text = Annotated[Any, WithJsonSchema({"type": "string"})]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def sent(self) -> dict[str, Any]:
        """Only the fields the client sent, exactly as sent."""
        return self.model_dump(exclude_unset=True)


class ReservationIn(_Body):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "src": "ORNL",
                    "dst": "NERSC",
                    "bandwidth": "10G",
                    "start": "2030-01-01T10:00:00Z",
                    "end": "2030-01-01T12:00:00Z",
                    "max_paths": 2,
                }
            ]
        },
    )

    src: NodeId = None
    dst: NodeId = None
    bandwidth: Bandwidth = None
    mode: Mode = Field(None, description="fixed (default), earliest, max-bandwidth or volume")
    start: Instant = None
    end: Instant = None
    duration: Seconds = Field(None, description="seconds; earliest mode")
    not_before: Instant = None
    not_after: Instant = None
    max_paths: Count = Field(
        None, description="split over up to this many paths (default 1; 16 for a volume)"
    )
    split: Split = None
    volume: Volume = Field(None, description="volume mode: the bytes to move from not_before")
    deadline: Instant = Field(
        None, description="volume mode: all moved by then (required for objective flattest)"
    )
    max_rate: Bandwidth = Field(None, description="volume mode: the total rate at most")
    objective: Objective = Field(
        None, description="volume mode: earliest (default: done soonest) or flattest (lowest peak)"
    )
    directional: Flag = Field(None, description="book one direction only (default both)")
    hold: Flag = Field(None, description="hold for confirmation instead of reserving")
    protect: Flag = Field(
        None,
        description="also book a standby path (link-disjoint where one exists) and fail over "
        "to it when a link of the primary goes down; one path only",
    )
    policing: Literal["soft", "hard"] | None = Field(
        None,
        description="traffic above the booked rate: soft (default) goes on as best effort, "
        "behind every reservation's guarantee; hard is discarded at the ingress edge",
    )
    description: Text = None


class ModifyIn(_Body):
    end: Instant = Field(None, description="a fixed reservation's new end")
    bandwidth: Bandwidth = Field(None, description="a fixed reservation's new bandwidth")
    deadline: Instant = Field(None, description="a volume's new deadline")
    volume: Volume = Field(None, description="a volume's new bytes in all (moved ones count)")
    max_rate: Bandwidth = Field(None, description="a volume's new cap on its total rate")
    objective: Objective = Field(None, description="a volume's new objective for the rest")


class MaintenanceIn(_Body):
    link: Text = Field(None, description="a link id; give this or node")
    node: Text = Field(None, description="a node id: all of its links")
    start: Instant = None
    end: Instant = None
    reason: Text = None


class LinkStateIn(_Body):
    state: Annotated[Any, WithJsonSchema({"type": "string", "enum": ["up", "down"]})] = None


class TopologyIn(BaseModel):
    """braid's topology format; checked field by field by the core's topology reader."""

    model_config = ConfigDict(extra="allow")

    nodes: Annotated[Any, WithJsonSchema({"type": "array", "items": {"type": "object"}})] = None
    links: Annotated[Any, WithJsonSchema({"type": "array", "items": {"type": "object"}})] = None
    domains: Annotated[Any, WithJsonSchema({"type": "array", "items": {"type": "object"}})] = None

    def sent(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


# -- responses ----------------------------------------------------------------------
# `extra="allow"` lets a field the service adds later through unchanged.


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class PathOut(_Out):
    nodes: list[str]
    links: list[str]
    bandwidth: float


class VlanOut(_Out):
    path: int
    vlan: int | None


class ProvisioningOut(_Out):
    state: str = Field(description="scheduled, installing, installed, removing, removed or failed")
    switch: str | None = Field(None, description="the switch that failed, when failed")
    error: str | None = None
    since: str
    verified: bool | None = Field(
        None,
        description="whether probes crossed every path both ways once installed (null: unchecked)",
    )
    check: str | None = Field(
        None, description="what the circuit check found, e.g. the hop that lost probes"
    )


class ReservationOut(_Out):
    id: str
    owner: str
    state: str
    kind: str
    src: str
    dst: str
    start: str
    end: str
    bandwidth: float = Field(description="Mbit/s")
    directional: bool
    paths: list[PathOut]
    split: str
    weights: list[float]
    mdi: float
    resequence: bool
    recommended_streams: int
    vlans: list[VlanOut]
    provisioning: ProvisioningOut | None = Field(
        None, description="what the switches hold of it; null where braid programs none"
    )
    protection: dict[str, Any] | None = Field(
        None,
        description="a protected reservation's primary and standby paths, which one carries "
        "its traffic (`on`) and the links they share; null when unprotected",
    )
    policing: Literal["soft", "hard"] = Field(
        "soft",
        description="traffic above the booked rate: soft goes on as best effort, hard is "
        "discarded at the ingress edge",
    )
    degraded: dict[str, Any] | None = Field(
        None, description="down links under its traffic and why it could not move; else null"
    )
    hold_expires_at: str | None
    created_at: str
    updated_at: str
    version: int
    token: str
    request: dict[str, Any]
    volume: dict[str, Any] | None = Field(
        None,
        description="a volume reservation's bytes, completion, peak (Mbit/s) and profile: "
        "steps [{start, end, rate, paths}] in time order; null for a window booking",
    )


class ReservationList(_Out):
    reservations: list[ReservationOut]
    next: str | None = Field(
        None, description="cursor of the next page (send it as `after`); null on the last page"
    )


class AuditOut(_Out):
    at: str | None
    actor: str
    reservation: str | None
    action: str
    from_: str | None = Field(alias="from")
    to: str | None
    detail: dict[str, Any]


class AuditList(_Out):
    entries: list[AuditOut]


class DeliveryIntervalOut(_Out):
    start: str
    end: str
    offered: float = Field(description="Mbit/s the sender offered (what policing dropped included)")
    delivered: float = Field(description="Mbit/s that reached the receiver")
    dropped: float = Field(description="Mbit/s the reservation's meter dropped (hard policing)")
    booked_share: float = Field(description="delivered / booked")
    short: bool = Field(description="offered at least the booked rate, got under 95 % of it")
    reset: bool = Field(description="a counter restarted: only what followed is counted")


class DeliveryTotalsOut(_Out):
    seconds: int
    offered_bytes: int
    delivered_bytes: int
    dropped_bytes: int
    offered_packets: int
    delivered_packets: int
    dropped_packets: int


class DeliveryDirectionOut(_Out):
    from_: str = Field(alias="from", description="the sending host")
    to: str
    status: str
    delivered_share: float | None = Field(description="mean delivered rate / booked rate")
    totals: DeliveryTotalsOut
    intervals: list[DeliveryIntervalOut]


class DeliveryOut(_Out):
    """What the reservation's traffic got, per direction, against the booked rate."""

    reservation: str
    booked: float = Field(description="Mbit/s booked now")
    status: str = Field(
        description="degraded (a direction got under 95 % of the booked rate while offering "
        "at least that, for 3 intervals in a row), ok, idle (the senders offer less than "
        "booked) or unmeasured (not sampled: not installed, or no counters yet)"
    )
    interval_seconds: float | None = Field(description="how often counters are sampled")
    directions: list[DeliveryDirectionOut]


class AvailabilityOut(_Out):
    """The planner's answer for the query (see the `braid plan` contract)."""

    status: str
    reason: str | None = None
    start: str | None = None
    end: str | None = None
    bandwidth: float | None = None
    paths: list[PathOut] | None = None
    slots: list[list[str]] | None = Field(
        None,
        description="all-slots: [from, to) spans of feasible *start* times (the plan "
        "contract's slots)",
    )
    free: list[list[str]] | None = Field(
        None,
        description="all-slots: each span's free time, [from, until): from its first start "
        "to the end of a booking at its last start (last start + duration)",
    )
    alternatives: dict[str, Any] | None = None
    volume: int | None = Field(None, description="volume, quickest: the bytes asked")
    completion: str | None = Field(None, description="volume, quickest: when the last byte moves")
    peak: float | None = Field(None, description="volume, quickest: the highest rate, Mbit/s")
    profile: list[dict[str, Any]] | None = Field(
        None, description="volume, quickest: steps [{start, end, rate, paths}] in time order"
    )
    most_by_deadline: int | None = Field(
        None, description="a refused volume: the most bytes that move by the deadline"
    )
    earliest_completion: str | None = Field(
        None, description="a refused volume: when all of it could move; absent: never"
    )


class TopologyOut(_Out):
    version: int
    nodes: list[dict[str, Any]]
    links: list[dict[str, Any]]
    domains: list[dict[str, Any]]


class TopologyPutOut(_Out):
    version: int
    failed: list[dict[str, str]]


class MaintenanceOut(_Out):
    maintenance: ReservationOut
    rerouted: list[dict[str, Any]]
    failed: list[dict[str, str]]


class LinkMoveOut(_Out):
    id: str
    action: str = Field(description="failover, failback, rerouted, degraded or restored")
    why: str


class LinkStateOut(_Out):
    link: str
    state: str
    changed: bool = Field(description="false when the link was in that state already")
    topology_version: int
    moved: list[LinkMoveOut]


class HealthOut(_Out):
    status: str
    topology_version: int


class ErrorDetail(_Out):
    code: str
    message: str
    field: str | None = None
    alternatives: list[dict[str, Any]] | None = None
    conflicts: list[Any] | None = None


class ErrorOut(_Out):
    error: ErrorDetail


# -- query parameters -----------------------------------------------------------------


class _Query(BaseModel):
    # Unknown parameters are refused: a misspelt filter must not be silently ignored.
    model_config = ConfigDict(extra="forbid")

    def given(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump(exclude_unset=True).items() if v is not None}


class ListQuery(_Query):
    state: str | None = Field(
        None, description="comma-separated: held, reserved, active, finished, cancelled, ..."
    )
    owner: str | None = Field(None, description="operators only; users see their own")
    start: str | None = Field(None, description="overlapping [start, end); ISO 8601")
    end: str | None = Field(None, description="ISO 8601 with offset")
    limit: str | None = Field(None, description="rows per page, 1 to 1000 (default 1000)")
    after: str | None = Field(None, description="the `next` cursor of the previous page")


class AvailabilityQuery(_Query):
    """Strings as sent; the service reads and checks them like a reservation body."""

    mode: str | None = Field(
        None, description="fixed, earliest, max-bandwidth, all-slots, volume or quickest"
    )
    volume: str | None = Field(None, description="volume, quickest: bytes, or with a unit: 40TB")
    deadline: str | None = Field(None, description="volume: all moved by then")
    max_rate: str | None = Field(None, description="volume, quickest: total rate at most")
    objective: str | None = Field(None, description="volume: earliest or flattest")
    src: str | None = None
    dst: str | None = None
    bandwidth: str | None = Field(None, description="Mbit/s, or with a unit: 10G")
    start: str | None = None
    end: str | None = None
    duration: str | None = Field(None, description="seconds, or with a unit: 90s, 15m, 2h, 1d")
    not_before: str | None = None
    not_after: str | None = None
    window_start: str | None = None
    window_end: str | None = None
    max_paths: str | None = None
    split: str | None = None
    directional: str | None = Field(None, description="true or false")
