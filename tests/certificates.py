"""Certificates for the TLS tests: a throw-away CA and servers it signs for 127.0.0.1."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["issue_certificate", "issue_self_signed"]


def issue_certificate(
    folder: Path,
    name: str,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
    *,
    loopback: bool | None = None,
) -> tuple[x509.Name, ec.EllipticCurvePrivateKey]:
    """Write NAME.pem and NAME.key into `folder`: a CA when `issuer` is None, else signed by it.

    `loopback`: the certificate names 127.0.0.1 (default: when it has an issuer).
    """
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    issuer_name, issuer_key = issuer or (subject, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    names_loopback = issuer is not None if loopback is None else loopback
    if names_loopback:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
    cert = builder.sign(issuer_key, hashes.SHA256())
    (folder / f"{name}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / f"{name}.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return subject, key


def issue_self_signed(folder: Path, name: str) -> None:
    """Write NAME.pem and NAME.key: a certificate for 127.0.0.1 that signs itself
    (as `openssl req -x509` makes one: no CA of its own to trust, only itself)."""
    issue_certificate(folder, name, None, loopback=True)
