"""`--cacert FILE` (or BRAID_CACERT): the client commands verify an HTTPS server against it.

A `braid serve --tls-cert --tls-key` with a self-signed certificate is
refused without it (saying which option to pass), and answers with it.
"""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from braid.adapters.free_ports import free_port
from braid.testing.serving import wait_healthy
from tests.certificates import issue_certificate, issue_self_signed

BRAID = str(Path(sys.executable).parent / "braid")
EXAMPLE = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples" / "science-net.yaml"


def _braid(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BRAID_")}
    environment.update(COLUMNS="200", **env)
    return subprocess.run(
        [BRAID, *args], capture_output=True, text=True, timeout=60, env=environment
    )


@pytest.fixture(scope="module")
def https(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """A self-signed HTTPS `braid serve`: its URL, an operator's token, its certificate."""
    folder = tmp_path_factory.mktemp("cacert")
    issue_self_signed(folder, "server")
    database = f"sqlite:///{folder / 'braid.db'}"
    made = _braid("token", "create", "--user", "olga", "--role", "operator", "--database", database)
    token = made.stdout.splitlines()[0].strip()
    port = free_port()
    tls = ["--tls-cert", str(folder / "server.pem"), "--tls-key", str(folder / "server.key")]
    command = [BRAID, "serve", "-t", str(EXAMPLE), "--port", str(port), "--database", database]
    with (folder / "serve.log").open("w") as log:
        server = subprocess.Popen([*command, *tls], stdout=log, stderr=subprocess.STDOUT)
        url = f"https://127.0.0.1:{port}"
        try:
            trusted = ssl.create_default_context(cafile=str(folder / "server.pem"))
            wait_healthy(url, server, verify=trusted)
            yield url, token, folder / "server.pem"
        finally:
            server.terminate()
            server.wait(timeout=30)


def test_without_cacert_the_certificate_is_not_trusted_and_the_error_says_what_to_pass(
    https: tuple[str, str, Path],
) -> None:
    url, token, _ = https
    done = _braid("list", "--url", url, "--token", token)
    assert done.returncode == 2
    assert "certificate is not trusted" in done.stderr and "--cacert" in done.stderr, done.stderr


def test_cacert_or_braid_cacert_verifies_the_self_signed_server(
    https: tuple[str, str, Path],
) -> None:
    url, token, cert = https
    done = _braid("list", "--url", url, "--token", token, "--cacert", str(cert))
    assert done.returncode == 0, done.stderr
    done = _braid("network", "show", "--url", url, "--token", token, BRAID_CACERT=str(cert))
    assert done.returncode == 0, done.stderr
    assert "ORNL" in done.stdout or "version" in done.stdout.lower(), done.stdout
    reserve = ["reserve", "--src", "ORNL", "--dst", "NERSC", "--bandwidth", "1G"]
    window = ["--start", "now+1h", "--end", "now+2h"]
    done = _braid(*reserve, *window, "--url", url, "--token", token, BRAID_CACERT=str(cert))
    assert done.returncode == 0, done.stderr
    done = _braid("interdomain", "list", "--url", url, "--token", token, "--cacert", str(cert))
    assert "certificate" not in done.stderr, done.stderr  # reached: 503, no --domains


def test_another_ca_is_not_trusted_and_an_unreadable_file_is_named(
    https: tuple[str, str, Path], tmp_path: Path
) -> None:
    url, token, _ = https
    issue_certificate(tmp_path, "other", None)
    done = _braid("list", "--url", url, "--token", token, "--cacert", str(tmp_path / "other.pem"))
    assert done.returncode == 2 and "not trusted" in done.stderr, done.stderr
    done = _braid("list", "--url", url, "--token", token, "--cacert", str(tmp_path / "no.pem"))
    assert done.returncode == 2 and "--cacert: cannot use" in done.stderr, done.stderr
