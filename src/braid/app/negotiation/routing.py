"""One `AgentPool` over several: braid agents over gRPC, NSI providers over SOAP."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager

from braid.app.negotiation.ports import AgentPool, Pending, PrepReply, Replaced, Window
from braid.core.negotiation.holds import SegmentAsk
from braid.core.negotiation.result_rules import SwitchPlan

__all__ = ["RoutedPool"]


class RoutedPool:
    """Each domain's calls go to its own pool (`special`), every other domain's to `default`."""

    def __init__(self, default: AgentPool, special: Mapping[str, AgentPool]) -> None:
        self._default = default
        self._special = dict(special)

    def _for(self, domain: str) -> AgentPool:
        return self._special.get(domain, self._default)

    @contextmanager
    def together(self) -> Iterator[None]:
        pools = {id(p): p for p in (self._default, *self._special.values())}
        with ExitStack() as stack:
            for pool in pools.values():
                stack.enter_context(pool.together())
            yield

    @contextmanager
    def negotiating(self, domains: Collection[str]) -> Iterator[None]:
        pools = {id(p): p for p in (self._default, *self._special.values())}
        with ExitStack() as stack:
            for pool in pools.values():
                stack.enter_context(pool.negotiating(domains))
            yield

    def offers(
        self,
        domain: str,
        transaction: str,
        token: str,
        window: Window,
        spans: Sequence[tuple[str, str]],
        symmetric: bool,
        replaces: Replaced | None = None,
    ) -> Pending[list[int]]:
        pool = self._for(domain)
        return pool.offers(domain, transaction, token, window, spans, symmetric, replaces)

    def prepare(
        self,
        domain: str,
        transaction: str,
        token: str,
        window: Window,
        segments: Sequence[SegmentAsk],
        hold_seconds: int,
        symmetric: bool,
        replaces: Replaced | None = None,
    ) -> Pending[PrepReply]:
        pool = self._for(domain)
        return pool.prepare(
            domain, transaction, token, window, segments, hold_seconds, symmetric, replaces
        )

    def commit(
        self, domain: str, transaction: str, token: str, switches: Sequence[SwitchPlan] = ()
    ) -> Pending[str]:
        return self._for(domain).commit(domain, transaction, token, switches)

    def abort(self, domain: str, transaction: str, token: str) -> Pending[str]:
        return self._for(domain).abort(domain, transaction, token)

    def release(self, domain: str, transaction: str, token: str) -> Pending[str]:
        return self._for(domain).release(domain, transaction, token)
