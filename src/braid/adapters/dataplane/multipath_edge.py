"""`MultipathEdge`: one `braid-dp edge` between a host and the network, driven over its socket."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from braid.adapters.dataplane.edge_protocol import (
    EdgeConfig,
    EdgeCounters,
    ReseqSettings,
    encode_configure,
    encode_edge_request,
    encode_set_reseq,
    encode_set_weights,
    parse_edge_counters,
)
from braid.adapters.dataplane.element import BraidDpElement, ElementError

__all__ = ["MultipathEdge", "MultipathEdgeError"]


class MultipathEdgeError(ElementError):
    """braid-dp edge did not start, died, or its control socket broke."""


class MultipathEdge(BraidDpElement):
    """Splits the configured reservations' packets from interface `host` over VLAN
    paths on interface `net`, and puts the TCP flows arriving on them back in order.

    Use as a context manager, or call `start()` and `stop()`.
    """

    error = MultipathEdgeError

    def __init__(
        self,
        host: str,
        net: str,
        config: EdgeConfig,
        *,
        namespace: str | None = None,
        binary: Path | None = None,
    ) -> None:
        super().__init__(namespace=namespace, binary=binary)
        self.host, self.net = host, net
        self._config = config

    @property
    def config_path(self) -> Path:
        return self.rundir / "edge.json"

    def before_start(self) -> None:
        self.config_path.write_text(json.dumps(self._config.as_json()), encoding="utf-8")

    def element_argv(self, binary: Path) -> list[str]:
        command = [str(binary), "edge", "--host", self.host, "--net", self.net]
        return [*command, "--control", str(self.control_path), "--config", str(self.config_path)]

    def configure(self, config: EdgeConfig) -> dict[str, object]:
        """Replaces the whole configuration (path counters start again)."""
        reply = self.request(encode_configure(config))
        self._config = config
        return reply

    def set_weights(self, reservation: str, weights: Sequence[float]) -> dict[str, object]:
        """New WRR weights, in path order; a path at 0 gets nothing, the others carry on."""
        return self.request(encode_set_weights(reservation, weights))

    def set_reseq(self, settings: ReseqSettings) -> dict[str, object]:
        return self.request(encode_set_reseq(settings))

    def config(self) -> dict[str, object]:
        return self.request(encode_edge_request("get"))

    def counters(self) -> EdgeCounters:
        return parse_edge_counters(self.request(encode_edge_request("counters")))
