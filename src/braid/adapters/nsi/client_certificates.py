"""The TLS client certificate behind a request, for the NSI provider's allow-list.

uvicorn verifies a client's certificate against `tls_client_ca` (the server
asks every client for one, and requires none: REST callers use bearer
tokens) but does not tell the application whose it was. `PeerCertProtocol`
is uvicorn's own httptools protocol that also puts the verified
certificate's subject into each request's scope
(`scope["extensions"]["tls"]["client_subject"]`); `client_subject` reads it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from braid.app.nsi.requesters import normal_dn

__all__ = ["PeerCertProtocol", "client_subject", "subject_of"]


def subject_of(peercert: dict[str, Any] | None) -> str | None:
    """The subject of a certificate as Python's ssl gives it (`getpeercert()`), e.g.
    `CN=onsa.example.org,O=Example`; None without a verified certificate."""
    if not peercert or not peercert.get("subject"):
        return None
    pairs = [
        f"{name}={str(value).replace(',', chr(92) + ',')}"
        for rdn in peercert["subject"]
        for name, value in rdn
    ]
    return normal_dn(",".join(pairs))


class PeerCertProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, each request's scope carrying the client's subject."""

    _subject: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._subject = subject_of(transport.get_extra_info("peercert"))

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._subject is not None:
            extensions: dict[str, Any] = dict(self.scope.get("extensions") or {})
            extensions["tls"] = {"client_subject": self._subject}
            self.scope["extensions"] = extensions


def client_subject(request: Request) -> str | None:
    """The verified client certificate's subject, or None (no TLS, or no certificate)."""
    extensions = request.scope.get("extensions") or {}
    tls = extensions.get("tls") or {}
    subject = tls.get("client_subject")
    return subject if isinstance(subject, str) else None
