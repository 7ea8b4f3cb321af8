"""`braid serve --tls-cert --tls-key`: HTTPS that a client verifying the CA accepts."""

from __future__ import annotations

import ssl
import subprocess
import sys
from pathlib import Path

import httpx

from braid.adapters.free_ports import free_port
from braid.testing.serving import wait_healthy
from tests.certificates import issue_certificate

BRAID = str(Path(sys.executable).parent / "braid")
EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "science-net.yaml"


def _serve(tmp_path: Path, *tls: str) -> subprocess.Popen[str]:
    port = free_port()
    command = [BRAID, "serve", "-t", str(EXAMPLE), "--port", str(port), *tls]
    command += ["--database", f"sqlite:///{tmp_path / 'braid.db'}"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _tls(folder: Path, cert: str, key: str) -> list[str]:
    return ["--tls-cert", str(folder / cert), "--tls-key", str(folder / key)]


def _port(process: subprocess.Popen[str]) -> int:
    args = process.args
    assert isinstance(args, list)
    return int(args[args.index("--port") + 1])


def test_the_api_is_served_over_https(tmp_path: Path) -> None:
    ca = issue_certificate(tmp_path, "ca", None)
    issue_certificate(tmp_path, "server", ca)
    server = _serve(tmp_path, *_tls(tmp_path, "server.pem", "server.key"))
    trusted = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
    try:
        # Answers 200 over HTTPS to a client that trusts only the test CA.
        wait_healthy(f"https://127.0.0.1:{_port(server)}", server, verify=trusted)
        plain = f"http://127.0.0.1:{_port(server)}/healthz"
        try:
            refused = httpx.get(plain, timeout=2).status_code
        except httpx.TransportError:
            refused = 0
        assert refused != 200
    finally:
        server.terminate()
        out, _ = server.communicate(timeout=30)
    assert "braid listening on https://" in out


def test_a_key_without_its_certificate_is_refused_at_once(tmp_path: Path) -> None:
    issue_certificate(tmp_path, "ca", None)
    server = _serve(tmp_path, "--tls-key", str(tmp_path / "ca.key"))
    _, err = server.communicate(timeout=60)
    assert server.returncode == 2 and "tls_cert" in err
    server = _serve(tmp_path, *_tls(tmp_path, "ca.pem", "none.key"))
    _, err = server.communicate(timeout=60)
    assert server.returncode == 2 and "--tls-cert/--tls-key: cannot use" in err
