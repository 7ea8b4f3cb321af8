"""One `AgentPool` over several: braid agents over gRPC, NSI providers over SOAP."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager

from braid.app.agent.messages import OffersCall, PrepCall
from braid.app.negotiation.ports import AgentPool, Pending, PrepReply
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

    def offers(self, domain: str, call: OffersCall) -> Pending[list[int]]:
        return self._for(domain).offers(domain, call)

    def prepare(self, domain: str, call: PrepCall) -> Pending[PrepReply]:
        return self._for(domain).prepare(domain, call)

    def commit(
        self, domain: str, transaction: str, token: str, switches: Sequence[SwitchPlan] = ()
    ) -> Pending[str]:
        return self._for(domain).commit(domain, transaction, token, switches)

    def abort(self, domain: str, transaction: str, token: str) -> Pending[str]:
        return self._for(domain).abort(domain, transaction, token)

    def release(self, domain: str, transaction: str, token: str) -> Pending[str]:
        return self._for(domain).release(domain, transaction, token)
