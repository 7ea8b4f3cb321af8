"""The peer policy file of `braid agent --policy`: the example loads, errors name the line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from braid.adapters.peer_policy_files import load_peer_policy
from braid.bootstrap.agent import start_agent
from braid.core.errors import InputError
from braid.core.negotiation.peers import identify

EXAMPLE = Path(__file__).resolve().parents[3] / "deploy" / "etc" / "agent-policy.yaml"
G = 10**9
EAST = "peers:\n  east:\n    subjects: [a]\n"


def test_the_deploy_example_loads(tmp_path: Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    shutil.copy(EXAMPLE, policy_file)
    (tmp_path / "west.token").write_text("west-token-0123456789\n")
    policy = load_peer_policy(policy_file)
    assert sorted(policy.peers) == ["east", "old-east", "west"]
    east = policy.peers["east"]
    assert east.limits.max_bandwidth == 20 * G and east.vlans == {"a-rn1": ((150, 169),)}
    assert not policy.peers["old-east"].allowed
    assert identify(policy, (), "west-token-0123456789") == policy.peers["west"]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (EAST + "    max_bandwidth: lots\n", "line 4: peers.east.max_bandwidth"),
        (EAST + "    vlans:\n      l1: 5000\n", "line 5: peers.east.vlans.l1"),
        ("peers:\n  east:\n    token_file: none.token\n", "line 3: peers.east.token_file"),
        ("peers:\n  a.b:\n    subjects: [x]\n    colour: red\n", "line 4: peers.a.b.colour"),
        ("peers:\n  east: {subjects: [a]}\npolicy: {}\n", "line 3: policy: unknown key"),
        ("peers:\n  east: [\n", "line 3: not YAML"),
        ("- east\n", "must be a mapping with the key peers"),
    ],
)  # fmt: skip
def test_an_error_names_the_line_and_the_field(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_peer_policy(path)
    assert where in str(caught.value) and str(path) in str(caught.value)


def test_an_agent_refuses_vlans_on_a_link_it_does_not_own(tmp_path: Path) -> None:
    topology = {
        "domains": [{"id": "a", "kind": "site"}, {"id": "w", "kind": "wan"}],
        "nodes": [{"id": "a1", "domain": "a"}, {"id": "w1", "domain": "w"}],
        "links": [{"id": "a-w", "a": "a1", "b": "w1", "capacity": "10G", "vlans": "100-199"}],
    }
    (tmp_path / "net.yaml").write_text(yaml.safe_dump(topology))
    (tmp_path / "policy.yaml").write_text(
        yaml.safe_dump({"peers": {"o": {"subjects": ["o"], "vlans": {"a-w": "150-159"}}}})
    )
    # The WAN owns the link to the site: the site agent may not hand out its VLANs.
    with pytest.raises(InputError, match=r"peers\.o\.vlans\.a-w: not a border link"):
        start_agent(
            tmp_path / "net.yaml",
            "a",
            tmp_path / "a.db",
            listen="127.0.0.1:0",
            policy=tmp_path / "policy.yaml",
        )
    assert not (tmp_path / "a.db").exists() or (tmp_path / "a.db").stat().st_size == 0


def test_an_agent_without_a_policy_warns_that_it_is_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    topology = {
        "domains": [{"id": "a", "kind": "site"}],
        "nodes": [{"id": "a1", "domain": "a"}, {"id": "a2", "domain": "a"}],
        "links": [{"id": "l", "a": "a1", "b": "a2", "capacity": "10G"}],
    }
    (tmp_path / "net.yaml").write_text(yaml.safe_dump(topology))
    with caplog.at_level("WARNING"):
        handle = start_agent(tmp_path / "net.yaml", "a", tmp_path / "a.db", listen="127.0.0.1:0")
    handle.stop()
    assert "agent a has no peer policy (--policy): any caller may reserve" in caplog.text
