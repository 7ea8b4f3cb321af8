"""Each domain's agent programs its own Open vSwitch bridge: real agent and orchestrator
processes, a private Open vSwitch; the rules of a committed reservation appear on every
domain's bridge, and a cancel leaves nothing of braid's on any of them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.adapters.southbound.ovs_sandbox import OvsSandbox
from braid.bootstrap.local_cluster import LocalCluster
from tests.e2e.waiting import wait_for
from tests.integration.negotiation.test_domain_southbound import NET, WIRING

pytestmark = pytest.mark.e2e

G = 10**9
BRIDGES = {"site-a": "br-a", "x1": "br-x1", "x2": "br-x2", "site-b": "br-b"}


def _braid_entries(ovs: OvsSandbox, bridge: str) -> tuple[list[str], list[str]]:
    """braid's flows (its cookie tag) and every group on `bridge`."""
    flows = [line for line in ovs.ofctl("dump-flows", bridge).splitlines() if "0xb7a1" in line]
    groups = [line for line in ovs.ofctl("dump-groups", bridge).splitlines() if "group_id" in line]
    return flows, groups


@pytest.fixture
def cluster(ovs: OvsSandbox, tmp_path: Path) -> Iterator[LocalCluster]:
    source = tmp_path / "net.yaml"
    source.write_text(yaml.safe_dump(NET))
    domain_args = {}
    for domain, bridge in BRIDGES.items():
        (switch,) = WIRING[domain]["switches"]
        ovs.add_bridge(bridge, switch["dpid"])
        wiring = {
            "drivers": {"direct": {"rundir": str(ovs.rundir)}},
            "switches": [{**switch, "driver": "direct", "bridge": bridge}],
        }
        path = tmp_path / f"{domain}-wiring.yaml"
        path.write_text(yaml.safe_dump(wiring))
        # These bridges have no ports to queue on: these agents only route
        # (test_domain_enforcement.py holds the rates on veth-linked bridges).
        domain_args[domain] = [
            "--southbound", str(path), "--provision-lead", "5", "--no-enforce-rates",
        ]  # fmt: skip
    running = LocalCluster(
        source, tmp_path / "run", orchestrator_args=["--timeout", "2"], domain_args=domain_args
    )
    with running:
        yield running


def test_each_domain_programs_its_bridge_and_cancel_leaves_nothing(
    ovs: OvsSandbox, cluster: LocalCluster
) -> None:
    now = int(time.time())
    request = pb.Reservation(
        id="r-ovs",
        source=pb.Endpoint(domain="site-a", point="a-host"),
        destination=pb.Endpoint(domain="site-b", point="b-host"),
        bandwidth_bps=12 * G,
        window=pb.Window(start=now + 3, end=now + 3600),  # within the lead: rules go in now
        strategy=pb.STRATEGY_PARTIAL_OFFERS,
        max_paths=2,
    )
    reply = cluster.reserve(request)
    assert reply.success, reply.reason
    assert {plan.domain for plan in reply.switches} == set(BRIDGES)

    def installed() -> bool:
        return all(_braid_entries(ovs, b)[0] for b in BRIDGES.values())

    assert wait_for(installed, 20), "every domain's rules on its bridge"
    # Both SDXs bridge two paths, each way: four rules each; both edges split over two.
    for domain, bridge in BRIDGES.items():
        flows, groups = _braid_entries(ovs, bridge)
        expected = sum(len(p.rules) for p in reply.switches if p.domain == domain)
        assert len(flows) == expected, (domain, flows)
        assert len(groups) == (1 if domain.startswith("site") else 0), (domain, groups)

    cancelled = cluster.orchestrator().Cancel(pb.CancelQuery(id="r-ovs"), timeout=10)
    assert cancelled.status == "cancelled"

    def empty() -> bool:
        return all(_braid_entries(ovs, b) == ([], []) for b in BRIDGES.values())

    assert wait_for(empty, 20), "nothing of braid's left on any bridge"
