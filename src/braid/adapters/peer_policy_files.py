"""An agent's peer policy file (`braid agent --policy FILE`): YAML in, `PeerPolicy` out.

    peers:
      east:                                  # the peer's name, as refusals give it
        subjects: [orchestrator.east.example.net]   # certificate CN or SAN (mutual TLS)
        token_file: east.token               # or a bearer token (path beside this file)
        allowed: true
        max_bandwidth: 20G
        max_duration: 1d
        horizon: 30d
        vlans: {a-rn1: 150-169}              # per owned border link

An error names the field and the line it is on
(`policy.yaml line 5: peers.east.max_bandwidth: ...`).
"""

from __future__ import annotations

from pathlib import Path

import yaml

from braid.core.errors import InputError
from braid.core.negotiation.peers import PeerPolicy, peer_policy_from_dict

__all__ = ["load_peer_policy"]


def load_peer_policy(path: Path) -> PeerPolicy:
    """Read and check the policy file; InputError naming the file, line and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError("--policy", f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path} line {mark.line + 1}" if mark is not None else str(path)
        raise InputError(where, f"not YAML: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(data, dict):
        raise InputError(str(path), "must be a mapping with the key peers")
    unknown = sorted(set(data) - {"peers"})
    try:
        if unknown:
            raise InputError(str(unknown[0]), "unknown key; known: peers")

        def read_token(name: str, field: str) -> str:
            token_path = path.parent / name  # an absolute `name` stands as it is
            try:
                return token_path.read_text(encoding="utf-8")
            except OSError as exc:
                raise InputError(field, f"cannot read {token_path}: {exc.strerror}") from exc

        return peer_policy_from_dict(data.get("peers"), read_token)
    except InputError as exc:
        line = _line_of(root, exc.field)
        where = f"{path} line {line}" if line else str(path)
        raise InputError(where, str(exc)) from exc


def _line_of(node: yaml.Node | None, field: str) -> int | None:
    """The line of `field` (a dotted path of mapping keys; keys may hold dots) in the file."""
    rest, line = field, None
    while node is not None and rest and isinstance(node, yaml.MappingNode):
        match = None
        for key, value in node.value:
            name = str(key.value)
            fits = rest == name or rest.startswith(name + ".")
            if fits and (match is None or len(name) > len(str(match[0].value))):
                match = (key, value)
        if match is None:
            break
        key, node = match
        line = key.start_mark.line + 1
        rest = rest[len(str(key.value)) + 1 :]
    return line
