"""Maximum delay imbalance: seed 002's values, gating in packet mode, configurable thresholds."""

from __future__ import annotations

import pytest

from braid.core.errors import InputError
from braid.core.model.network import Network
from braid.core.multipath import (
    MdiPolicy,
    SplitPlan,
    SplitRefusal,
    mdi,
    split_fixed,
    split_max_bandwidth,
)
from tests.unit.core.multipath.nets import M, network, two_links


def test_seed_values() -> None:
    assert mdi([25, 50]) == pytest.approx(0.1667, abs=1e-4)
    assert mdi([50, 25]) == pytest.approx(1 / 6)
    assert mdi([25, 100]) == pytest.approx(0.3)
    assert mdi([25, 25, 25]) == 0.0
    assert mdi([40]) == 0.0
    assert mdi([]) == 0.0
    assert mdi([0, 0]) == 0.0
    assert mdi([0, 10]) == pytest.approx(0.5)


def plan(result: SplitPlan | SplitRefusal) -> SplitPlan:
    assert isinstance(result, SplitPlan), result
    return result


def test_25_and_50_ms_resequence_in_packet_mode() -> None:
    net = two_links(25, 50)
    packet = plan(split_fixed(net, "A", "B", 150 * M, 0, 10, max_paths=2, mode="packet"))
    assert len(packet.allocations) == 2
    assert packet.mdi == pytest.approx(0.1667, abs=1e-4)
    assert packet.resequence
    assert packet.mode == "packet"
    flow = plan(split_fixed(net, "A", "B", 150 * M, 0, 10, max_paths=2, mode="flow"))
    assert flow.mdi == pytest.approx(0.1667, abs=1e-4)
    assert not flow.resequence  # one TCP flow stays on one path: nothing to reorder


def test_25_and_100_ms_give_03() -> None:
    packet = plan(
        split_fixed(two_links(25, 100), "A", "B", 150 * M, 0, 10, max_paths=2, mode="packet")
    )
    assert packet.mdi == pytest.approx(0.3)
    assert packet.resequence


def test_above_04_refused_in_packet_mode_only() -> None:
    net = two_links(25, 300)  # MDI 0.423
    refusal = split_fixed(net, "A", "B", 150 * M, 0, 10, max_paths=2, mode="packet")
    assert isinstance(refusal, SplitRefusal)
    assert "MDI" in refusal.reason and "0.4" in refusal.reason
    assert refusal.max_flow == 200 * M
    assert refusal.best_total == 100 * M  # one path is all packet mode may use
    flow = plan(split_fixed(net, "A", "B", 150 * M, 0, 10, max_paths=2, mode="flow"))
    assert flow.mdi == pytest.approx(300 / 325 - 0.5)
    assert flow.total == 150 * M


def test_thresholds_are_configurable() -> None:
    lenient = MdiPolicy(resequence_above=0.2)
    calm = plan(
        split_fixed(
            two_links(25, 50), "A", "B", 150 * M, 0, 10, max_paths=2, mode="packet", policy=lenient
        )
    )
    assert not calm.resequence
    strict = MdiPolicy(resequence_above=0.1, refuse_above=0.25)
    result = split_fixed(
        two_links(25, 100), "A", "B", 150 * M, 0, 10, max_paths=2, mode="packet", policy=strict
    )
    assert isinstance(result, SplitRefusal)
    assert "0.25" in result.reason


def test_policy_rejects_nonsense() -> None:
    with pytest.raises(InputError, match="resequence_above"):
        MdiPolicy(resequence_above=0.45, refuse_above=0.4)
    with pytest.raises(InputError, match="refuse_above"):
        MdiPolicy(refuse_above=0.7)


def balanced_alternative() -> Network:
    # The max-flow paths are the two widest (25 ms and 300 ms, MDI 0.42);
    # a narrower 30 ms path balances the 25 ms one and still carries enough.
    return network(
        [
            ("fast", "A", "B", 100, 25),
            ("slow", "A", "B", 140, 300),
            ("ac", "A", "C", 60, 15),
            ("cb", "C", "B", 60, 15),
        ]
    )


def test_packet_mode_searches_a_balanced_path_set() -> None:
    net = balanced_alternative()
    flow = plan(split_fixed(net, "A", "B", 200 * M, 0, 10, max_paths=2, mode="flow"))
    assert {a.path.links for a in flow.allocations} == {("fast",), ("slow",)}
    packet = plan(split_fixed(net, "A", "B", 150 * M, 0, 10, max_paths=2, mode="packet"))
    assert {a.path.links for a in packet.allocations} == {("fast",), ("ac", "cb")}
    assert packet.mdi == pytest.approx(30 / 55 - 0.5)
    assert not packet.resequence
    assert packet.total == 150 * M


def test_max_bandwidth_respects_the_gate() -> None:
    net = two_links(25, 300)
    flow = split_max_bandwidth(net, "A", "B", 0, 10, max_paths=2, mode="flow")
    packet = split_max_bandwidth(net, "A", "B", 0, 10, max_paths=2, mode="packet")
    assert flow is not None and packet is not None
    assert flow.total == 200 * M
    assert packet.total == 100 * M and len(packet.allocations) == 1
    assert packet.max_flow == 200 * M
