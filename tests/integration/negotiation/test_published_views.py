"""Each agent holds only its own domain's file; the orchestrator holds none.

Real agent and orchestrator processes: the orchestrator learns the domain
graph from the views the agents publish (`DomainAgent.View`) and follows
a change of one agent's file once that agent is restarted on it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from braid.adapters.domain_files import load_multidomain
from braid.adapters.rpc.published_views import part_from_pb
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.bootstrap.local_cluster import LocalCluster
from braid.core.negotiation.published import domain_part
from tests.integration.negotiation.conftest import (
    SMALL,
    G,
    assert_ledgers_agree,
    reservation,
    wait_until,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    source = tmp_path / "small.yaml"
    source.write_text(yaml.safe_dump(SMALL))
    args = ["--timeout", "1", "--hold", "30", "--refresh", "0.2"]
    with LocalCluster(source, tmp_path / "run", orchestrator_args=args, per_domain=True) as c:
        yield c


def test_no_file_holds_another_domains_insides(cluster: LocalCluster) -> None:
    w1 = yaml.safe_load(cluster.files["w1"].read_text())
    assert {link["id"] for link in w1["links"]} == {"a-w1", "w1-b", "w1-core"}
    assert w1["domains"][0]["id"] == "w1"  # its own entry first, then the neighbours
    assert "w2-x" not in {n["id"] for n in w1["nodes"]}
    assert "--topology" not in list(cluster.processes["orchestrator"].popen.args)  # type: ignore[arg-type]


def test_an_agent_publishes_the_part_the_single_file_gives_it(cluster: LocalCluster) -> None:
    single = load_multidomain(cluster.file)
    for domain in cluster.domains:
        published = part_from_pb(cluster.agent(domain).View(pb.ViewQuery(), timeout=5))
        assert published == domain_part(single, domain)
        assert published.version == domain_part(single, domain).version


def test_an_orchestrator_without_a_file_negotiates_across_the_agents(
    cluster: LocalCluster,
) -> None:
    first = cluster.reserve(reservation("r1", 4, paths=1))
    assert first.success, first.reason
    second = cluster.reserve(reservation("r2", 14))  # needs both WANs, blind w2 too
    assert second.success, second.reason
    assert sorted(p.bandwidth_bps for p in second.paths) == [6 * G, 8 * G]
    assert_ledgers_agree(cluster, [first, second])


def test_a_changed_agent_topology_is_picked_up(cluster: LocalCluster) -> None:
    full = cluster.reserve(reservation("full-0", 12, strategy=pb.STRATEGY_FULL_OFFERS))
    assert not full.success and "blind" in full.reason
    # w2's operator makes it visible: edits its own file and restarts its agent.
    own = yaml.safe_load(cluster.files["w2"].read_text())
    own["domains"][0]["visible"] = True
    cluster.files["w2"].write_text(yaml.safe_dump(own))
    cluster.terminate("w2")
    cluster.start_agent("w2")
    attempts = iter(range(1, 1000))

    def reserved() -> pb.ReservationResp | None:
        reply = cluster.reserve(
            reservation(f"full-{next(attempts)}", 12, strategy=pb.STRATEGY_FULL_OFFERS)
        )
        if reply.success:
            return reply
        assert "blind" in reply.reason, reply.reason
        time.sleep(0.1)
        return None

    done = wait_until(reserved)
    assert done is not None, "the orchestrator never saw w2 become visible"
    assert any(e.phase == "offers" and e.domain == "w2" for e in done.trace)
    assert_ledgers_agree(cluster, [done])
