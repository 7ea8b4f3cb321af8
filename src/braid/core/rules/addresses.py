"""Canonical text of the addresses rules match on, so read-back values compare equal."""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from braid.core.errors import InputError

__all__ = ["canonical_ipv4", "canonical_mac"]

_MAC_RE: Final = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")


def canonical_ipv4(value: str | None, field_name: str) -> str | None:
    """Canonical text of an IPv4 address or prefix ("10.0.0.1", "10.0.0.0/24")."""
    if value is None:
        return None
    try:
        net = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise InputError(field_name, f"not an IPv4 address or prefix: {value!r}") from exc
    return str(net.network_address) if net.prefixlen == 32 else str(net)


def canonical_mac(value: str | None, field_name: str) -> str | None:
    if value is None:
        return None
    text = value.lower()
    if not _MAC_RE.match(text):
        raise InputError(field_name, f"not a MAC address like 00:00:00:00:00:01: {value!r}")
    return text
