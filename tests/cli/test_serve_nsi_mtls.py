"""`braid serve --nsi-domain`: closed by default. Requesters come over HTTPS with a client
certificate the allow-list knows; without the list the server does not start (unless
--insecure, which it warns about)."""

from __future__ import annotations

import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from braid.adapters.free_ports import free_port
from braid.testing.nsi_requests import request
from braid.testing.serving import wait_healthy
from tests.certificates import issue_certificate

BRAID = str(Path(sys.executable).parent / "braid")
TOPOLOGY = """\
nodes: [{id: p1}, {id: p2}, {id: p3}]
links:
  - {id: p1-p2, a: p1, b: p2, capacity: 1G, vlans: 1780-1789}
  - {id: p2-p3, a: p2, b: p3, capacity: 1G, vlans: 1780-1789}
"""
NSA = "urn:ogf:network:requester.test:nsa"
REPLY_TO = "http://127.0.0.1:1/NSI/services/RequesterService2"


def _serve(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[str], int]:
    (tmp_path / "net.yaml").write_text(TOPOLOGY)
    port = free_port()
    command = [BRAID, "serve", "-t", str(tmp_path / "net.yaml"), "--port", str(port)]
    command += ["--database", f"sqlite:///{tmp_path / 'braid.db'}", "--nsi-domain", "braid.test"]
    process = subprocess.Popen(
        [*command, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return process, port


@pytest.fixture
def pki(tmp_path: Path) -> Path:
    ca = issue_certificate(tmp_path, "ca", None)
    issue_certificate(tmp_path, "server", ca)
    issue_certificate(tmp_path, "requester", ca)
    issue_certificate(tmp_path, "stranger", ca)  # signed by the CA, not on the list
    other = issue_certificate(tmp_path, "other-ca", None)
    issue_certificate(tmp_path, "forged", other)
    (tmp_path / "requesters.yaml").write_text(
        f"requesters:\n  - certificate: CN=requester\n    nsa:\n"
        f"      {NSA}: {{reply_to: ['{REPLY_TO}']}}\n"
    )
    return tmp_path


def _client(pki: Path, name: str | None) -> httpx.Client:
    context = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    if name is not None:
        context.load_cert_chain(pki / f"{name}.pem", pki / f"{name}.key")
    return httpx.Client(verify=context, timeout=10)


def test_only_a_listed_client_certificate_reserves(pki: Path) -> None:
    tls = ["--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key")]
    server, port = _serve(
        pki, *tls, "--tls-client-ca", str(pki / "ca.pem"),
        "--nsi-requesters", str(pki / "requesters.yaml"),
    )  # fmt: skip
    url = f"https://127.0.0.1:{port}"
    payload = request("reserve", requester=NSA, reply_to=REPLY_TO)
    try:
        wait_healthy(url, server, verify=ssl.create_default_context(cafile=str(pki / "ca.pem")))
        for name, said in ((None, "client certificate"), ("stranger", "is not known")):
            with _client(pki, name) as client:
                answer = client.post(url + "/NSI/services/CS2", content=payload)
            assert answer.status_code == 500 and "00302" in answer.text, answer.text
            assert said in answer.text
        with _client(pki, "forged") as client, pytest.raises(httpx.TransportError):
            client.post(url + "/NSI/services/CS2", content=payload)  # the handshake fails
        with _client(pki, "requester") as client:
            answer = client.post(url + "/NSI/services/CS2", content=payload)
            assert answer.status_code == 200 and "reserveResponse" in answer.text, answer.text
            other = request("reserve", requester="urn:ogf:network:other.test:nsa")
            answer = client.post(url + "/NSI/services/CS2", content=other)
            assert answer.status_code == 500 and "may not act as" in answer.text
        # REST callers need no certificate: they have tokens.
        with _client(pki, None) as client:
            assert client.get(url + "/v1/me").status_code == 401
    finally:
        server.terminate()
        server.communicate(timeout=30)


def test_without_the_allow_list_nsi_does_not_start(pki: Path) -> None:
    server, _ = _serve(pki)
    _, err = server.communicate(timeout=60)
    assert server.returncode == 2
    assert "nsi_requesters" in err and "--insecure" in " ".join(err.split())
    server, _ = _serve(pki, "--nsi-requesters", str(pki / "requesters.yaml"))
    _, err = server.communicate(timeout=60)
    assert server.returncode == 2 and "--tls-client-ca" in " ".join(err.split())


def test_insecure_serves_nsi_to_anyone_and_warns(pki: Path) -> None:
    server, port = _serve(pki, "--insecure")
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        answer = httpx.post(
            f"http://127.0.0.1:{port}/NSI/services/CS2", content=request("querySummarySync")
        )
        assert answer.status_code == 200, answer.text
        assert httpx.get(f"http://127.0.0.1:{port}/metrics").status_code == 200
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "--insecure" in err and "without authentication" in " ".join(err.split())
