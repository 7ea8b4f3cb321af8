"""Who may use braid's NSI provider: client certificates, the NSA ids each may act as,
and the replyTo endpoints braid may send each NSA's confirmations to.

As OpenNSA does, a requester is known by its TLS client certificate: the
certificate's subject (its distinguished name) maps to the requester NSA ids
it may name in a request's header. A request from a certificate that is not
listed, or naming a requesterNSA its certificate may not act as, is refused
(00302) before anything is read or stored; so is a replyTo that is not one of
that NSA's registered endpoints, before any connection is made to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from braid.app.nsi.messages import Header
from braid.core.errors import InputError
from braid.core.nsi.errors import UNAUTHORIZED, NsiError

__all__ = ["Requesters", "normal_dn", "requesters_from_dict"]

# Attribute names as certificates spell them (long, from Python's ssl) and as people do.
_SHORT = {
    "commonname": "CN",
    "organizationname": "O",
    "organizationalunitname": "OU",
    "countryname": "C",
    "localityname": "L",
    "stateorprovincename": "ST",
    "domaincomponent": "DC",
    "emailaddress": "EMAILADDRESS",
    "email": "EMAILADDRESS",
    "serialnumber": "SERIALNUMBER",
}


def normal_dn(text: str) -> str:
    """A distinguished name in one spelling, whatever the order and the separators:
    `CN=a, O=b`, `/O=b/CN=a` and `O=b,CN=a` all give `CN=a,O=b`.

    Raises ValueError for text that is not NAME=VALUE pairs."""
    stripped = text.strip()
    parts = stripped.lstrip("/").split("/") if stripped.startswith("/") else _commas(stripped)
    pairs = []
    for part in parts:
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"{text!r} is not a distinguished name (NAME=VALUE, …)")
        key = name.strip()
        pairs.append((_SHORT.get(key.lower().replace(" ", ""), key.upper()), value.strip()))
    return ",".join(f"{k}={v}" for k, v in sorted(pairs))


def _commas(text: str) -> list[str]:
    """Split at commas that are not escaped (RFC 4514: `\\,` is part of a value)."""
    return [p.replace("\\,", ",") for p in re.split(r"(?<!\\),", text)]


@dataclass(frozen=True, slots=True)
class Requesters:
    """certificate subject (normal form) -> NSA ids; NSA id -> its replyTo endpoints."""

    by_certificate: Mapping[str, frozenset[str]] = field(default_factory=dict)
    reply_to: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def known(self, certificate: str | None) -> frozenset[str]:
        """The NSA ids the sender of a request may act as; refused (00302) without a client
        certificate or with one not listed. Asked before the request is even parsed."""
        if certificate is None:
            raise NsiError(
                UNAUTHORIZED,
                "requesterNSA",
                "this provider takes requests only over TLS with a client certificate",
            )
        allowed = self.by_certificate.get(normal_dn(certificate))
        if allowed is None:
            raise NsiError(
                UNAUTHORIZED, "requesterNSA", f"the client certificate {certificate!r} is not known"
            )
        return allowed

    def check(self, header: Header, certificate: str | None, replies: bool = True) -> None:
        """Refuse (00302) a request whose sender may not act as its requesterNSA, or whose
        replyTo is not one of that NSA's endpoints (when `replies`: a synchronous query
        is answered in its own response, and its replyTo is never used)."""
        if header.requester_nsa not in self.known(certificate):
            raise NsiError(
                UNAUTHORIZED,
                "requesterNSA",
                f"the client certificate {certificate!r} may not act as {header.requester_nsa!r}",
            )
        registered = self.reply_to.get(header.requester_nsa, frozenset())
        if replies and header.reply_to and header.reply_to not in registered:
            raise NsiError(
                UNAUTHORIZED,
                "replyTo",
                f"{header.reply_to!r} is not an endpoint registered for {header.requester_nsa}",
            )


def requesters_from_dict(data: Any, where: str = "nsi_requesters") -> Requesters:
    """The requesters file's content:

        requesters:
          - certificate: "CN=onsa.example.org,O=Example"   # the client certificate's subject
            nsa:                                           # the NSA ids it may act as
              urn:ogf:network:example.org:nsa:
                reply_to: [https://nsa.example.org/NSI/services/RequesterService2]

    Errors name the entry (`requesters[0].nsa: …`)."""
    if not isinstance(data, Mapping) or set(data) - {"requesters"}:
        raise InputError(where, "expected a mapping with one key, requesters")
    entries = data.get("requesters") or []
    if not isinstance(entries, list):
        raise InputError(f"{where}.requesters", "expected a list")
    by_certificate: dict[str, frozenset[str]] = {}
    reply_to: dict[str, frozenset[str]] = {}
    for i, entry in enumerate(entries):
        at = f"requesters[{i}]"
        if not isinstance(entry, Mapping) or set(entry) - {"certificate", "nsa"}:
            raise InputError(at, "expected a mapping of certificate and nsa")
        try:
            subject = normal_dn(str(entry.get("certificate") or ""))
        except ValueError as exc:
            raise InputError(f"{at}.certificate", str(exc)) from exc
        nsas = entry.get("nsa")
        if not isinstance(nsas, Mapping) or not nsas:
            raise InputError(f"{at}.nsa", "expected a mapping of NSA id to its reply_to list")
        for nsa, detail in nsas.items():
            reply_to[str(nsa)] = reply_to.get(str(nsa), frozenset()) | _endpoints(
                detail, f"{at}.nsa.{nsa}"
            )
        by_certificate[subject] = by_certificate.get(subject, frozenset()) | frozenset(
            str(n) for n in nsas
        )
    return Requesters(by_certificate, reply_to)


def _endpoints(detail: Any, at: str) -> frozenset[str]:
    if detail is None:
        return frozenset()  # synchronous queries only: no confirmations are sent anywhere
    if not isinstance(detail, Mapping) or set(detail) - {"reply_to"}:
        raise InputError(at, "expected a mapping with reply_to (a list of URLs)")
    urls = detail.get("reply_to") or []
    if not isinstance(urls, list) or not all(
        isinstance(u, str) and re.match(r"https?://[^/\s]+", u) for u in urls
    ):
        raise InputError(f"{at}.reply_to", "expected a list of http(s) URLs")
    return frozenset(urls)
