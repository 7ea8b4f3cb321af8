"""What a negotiation takes and returns: the request, the trace, the outcome."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from braid.core.errors import InputError
from braid.core.model.units import to_mbps
from braid.core.negotiation.domains import GlobalView
from braid.core.negotiation.result_rules import SwitchPlan, SwitchRule, Way
from braid.core.negotiation.routes import Leg
from braid.core.negotiation.strategies import STRATEGIES, Strategy
from braid.core.rules.enforcement import Policing, parse_policing

# A window (or a volume's not_before) may start this many seconds before now (the
# agents allow 5 s too).
GRACE_SECONDS: Final = 5


@dataclass(frozen=True, slots=True)
class NegotiationRequest:
    """A multi-domain reservation: `bandwidth` bit/s from src to dst throughout [start, end)."""

    id: str
    src_domain: str
    src_point: str
    dst_domain: str
    dst_point: str
    bandwidth: int
    start: int
    end: int
    strategy: Strategy | None = None
    max_paths: int = 0
    symmetric: bool = True
    policing: Policing = Policing.SOFT  # how every domain holds the rate

    def to_dict(self) -> dict[str, Any]:
        return {
            "src": [self.src_domain, self.src_point],
            "dst": [self.dst_domain, self.dst_point],
            "bandwidth_bps": self.bandwidth,
            "start": self.start,
            "end": self.end,
            "strategy": self.strategy,
            "max_paths": self.max_paths,
            "symmetric": self.symmetric,
            "policing": self.policing.value,
        }

    @staticmethod
    def from_dict(reservation: str, data: dict[str, Any]) -> NegotiationRequest:
        return NegotiationRequest(
            reservation,
            str(data["src"][0]),
            str(data["src"][1]),
            str(data["dst"][0]),
            str(data["dst"][1]),
            int(data["bandwidth_bps"]),
            int(data["start"]),
            int(data["end"]),
            check_strategy(data.get("strategy")),
            int(data.get("max_paths", 0)),
            bool(data.get("symmetric", True)),
            parse_policing(data.get("policing", Policing.SOFT.value)),
        )


@dataclass(frozen=True, slots=True)
class TraceEvent:
    phase: str
    domain: str
    text: str

    def line(self) -> str:
        who = f"{self.domain}: " if self.domain else ""
        return f"[{self.phase}] {who}{self.text}"


@dataclass(frozen=True, slots=True)
class PathOutcome:
    legs: tuple[Leg, ...]
    bandwidth: int
    vlans: tuple[tuple[str, int], ...] = ()

    def domains(self) -> tuple[str, ...]:
        return tuple(leg.domain for leg in self.legs)


@dataclass(frozen=True)
class NegotiationResult:
    id: str
    success: bool
    reason: str = ""
    transaction: str = ""
    strategy: str = ""
    paths: tuple[PathOutcome, ...] = ()
    trace: tuple[TraceEvent, ...] = field(default_factory=tuple)
    # The SDX/edge rule plan of a committed reservation, in short (empty otherwise).
    switches: tuple[SwitchPlan, ...] = ()
    # "cancelled", or "failed" after a domain could not honour the commit;
    # empty: "committed" or "failed" as `success` says.
    status: str = ""
    # Each participant's state, as the decision log knows it (filled at lookup).
    holdings: tuple[tuple[str, str], ...] = ()
    # What was asked for, as negotiated (kept with the decision: a modify starts
    # from it); None in results written before modify existed.
    request: NegotiationRequest | None = None

    @property
    def granted(self) -> int:
        return sum(p.bandwidth for p in self.paths)

    @property
    def state(self) -> str:
        return self.status or ("committed" if self.success else "failed")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (bandwidth in Mbit/s, as every braid output)."""
        return {
            "id": self.id,
            "status": self.state,
            "reason": self.reason,
            "transaction": self.transaction,
            "strategy": self.strategy,
            "bandwidth": to_mbps(self.granted),
            "bandwidth_bps": self.granted,
            "paths": [
                {
                    "domains": list(p.domains()),
                    "legs": [[leg.domain, leg.entry, leg.exit] for leg in p.legs],
                    "bandwidth": to_mbps(p.bandwidth),
                    "bandwidth_bps": p.bandwidth,
                    "vlans": [[link, vlan] for link, vlan in p.vlans],
                }
                for p in self.paths
            ],
            "trace": [[e.phase, e.domain, e.text] for e in self.trace],
            "switches": plans_to_dict(self.switches),
            "holdings": {domain: state for domain, state in self.holdings},
            "request": None if self.request is None else self.request.to_dict(),
        }

    @staticmethod
    def from_dict(data: dict[str, Any]) -> NegotiationResult:
        return NegotiationResult(
            id=data["id"],
            success=data["status"] == "committed",
            reason=data["reason"],
            transaction=data["transaction"],
            strategy=data["strategy"],
            paths=tuple(
                PathOutcome(
                    tuple(Leg(*leg) for leg in p["legs"]),
                    int(p["bandwidth_bps"]),
                    tuple((link, int(vlan)) for link, vlan in p["vlans"]),
                )
                for p in data["paths"]
            ),
            trace=tuple(TraceEvent(*e) for e in data["trace"]),
            switches=plans_from_dict(data.get("switches", ())),
            status="" if data["status"] in ("committed", "failed") else data["status"],
            holdings=tuple((d, str(s)) for d, s in data.get("holdings", {}).items()),
            request=(
                None
                if data.get("request") is None
                else NegotiationRequest.from_dict(data["id"], data["request"])
            ),
        )


def plans_to_dict(plans: Sequence[SwitchPlan]) -> list[dict[str, Any]]:
    """A rule plan as the decision log keeps it (JSON-ready)."""
    return [
        {
            "domain": sw.domain,
            "switch": sw.switch,
            "dpid": sw.dpid,
            "rules": [
                [r.in_port, r.vlan, [[w.port, w.vlan, w.weight, w.rate] for w in r.ways]]
                for r in sw.rules
            ],
            "policing": None if sw.policing is None else sw.policing.value,
        }
        for sw in plans
    ]


def plans_from_dict(data: Iterable[dict[str, Any]]) -> tuple[SwitchPlan, ...]:
    """A rule plan as `plans_to_dict` wrote it (or an older entry, without policing)."""
    return tuple(
        SwitchPlan(
            sw["domain"],
            sw["switch"],
            int(sw["dpid"]),
            tuple(
                SwitchRule(port, vlan, tuple(Way(*w) for w in ways))
                for port, vlan, ways in sw["rules"]
            ),
            None if sw.get("policing") is None else parse_policing(sw["policing"]),
        )
        for sw in data
    )


def check_ends(view: GlobalView, src: tuple[str, str], dst: tuple[str, str]) -> None:
    """A request's two end points (domain, point): site domains of the view, points given.
    Errors name the field as the Orchestrator service spells it."""
    for side, (domain, _) in (("source", src), ("destination", dst)):
        spec = view.require_domain(domain, f"{side}.domain")
        if spec.kind != "site":
            raise InputError(f"{side}.domain", f"domain {domain!r} is a {spec.kind}, not a site")
    for side, (_, point) in (("source", src), ("destination", dst)):
        if not point:
            raise InputError(f"{side}.point", "missing")


def check_strategy(value: str | None) -> Strategy | None:
    if value is None or value == "":
        return None
    for strategy in STRATEGIES:
        if value == strategy:
            return strategy
    raise InputError("strategy", f"unknown strategy {value!r}; one of {', '.join(STRATEGIES)}")
