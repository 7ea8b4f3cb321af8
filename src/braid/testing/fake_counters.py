"""A fake network's flow counters as `DeliveryCounters`: what its switches counted.

`SwitchCounters`, the real thing, over `FakeNetworkStats`; `dropped` and
`refuse` are the fake's (see `fake_stats`).
"""

from __future__ import annotations

from braid.adapters.southbound.counters import SwitchCounters
from braid.core.delivery.samples import PacketsBytes
from braid.testing.fake_network import FakeNetwork
from braid.testing.fake_stats import FakeNetworkStats

__all__ = ["FakeDeliveryCounters"]


class FakeDeliveryCounters(SwitchCounters):
    def __init__(self, network: FakeNetwork) -> None:
        self.fake = FakeNetworkStats(network)
        super().__init__(self.fake)

    @property
    def dropped(self) -> dict[tuple[str, int], PacketsBytes]:
        """Packets and bytes each (switch, meter id) dropped."""
        return self.fake.dropped

    @property
    def refuse(self) -> dict[str, str]:
        """Switch -> the error it answers with."""
        return self.fake.refuse
