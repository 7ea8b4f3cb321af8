"""docs/deployment.md as a test: the systemd units verify, and braid serve runs as its unit would.

The units under deploy/systemd are checked with `systemd-analyze verify`
(braid's path replaced by this checkout's). Then the service unit's own
ExecStartPre and ExecStart run with the example settings file of
deploy/etc (TLS, the store on PostgreSQL when the tests have one), the test
books through HTTPS, and stops the service with the unit's KillSignal
within its TimeoutStopSec.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import ssl
import subprocess
import sys
import time
from configparser import ConfigParser
from pathlib import Path

import httpx
import pytest
import yaml

from braid.adapters.free_ports import free_port
from braid.testing.serving import wait_healthy
from tests.certificates import issue_certificate

ROOT = Path(__file__).resolve().parents[2]
UNITS = ROOT / "deploy" / "systemd"
BIN = Path(sys.executable).parent
INSTALLED = "/opt/braid/bin/braid"
EXAMPLE = ROOT / "src" / "braid" / "examples" / "science-net.yaml"


def _systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        reason = "systemd-analyze is missing (apt-get install systemd)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


def _unit(path: Path) -> ConfigParser:
    unit = ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(path)
    return unit


@pytest.mark.parametrize("name", sorted(p.name for p in UNITS.glob("*.service")))
def test_each_unit_verifies_and_is_hardened(name: str, tmp_path: Path) -> None:
    analyze = _systemd_analyze()
    text = (UNITS / name).read_text().replace(INSTALLED, str(BIN / "braid"))
    (tmp_path / name).write_text(text)
    checked = subprocess.run(
        [analyze, "verify", str(tmp_path / name)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stderr
    assert name.split("@")[0] not in checked.stderr, checked.stderr
    service = _unit(UNITS / name)["Service"]
    assert service["User"] == "braid" and service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict" and service["Restart"] == "on-failure"
    assert service["CapabilityBoundingSet"] == ""


def _settings(tmp_path: Path, port: int) -> Path:
    """deploy/etc/serve.yaml with this machine's paths put in for /etc/braid."""
    settings = yaml.safe_load((ROOT / "deploy" / "etc" / "serve.yaml").read_text())
    settings |= {
        "topology_file": str(EXAMPLE),
        "host": "127.0.0.1",
        "port": port,
        "tls_cert": str(tmp_path / "server.pem"),
        "tls_key": str(tmp_path / "server.key"),
    }
    path = tmp_path / "serve.yaml"
    path.write_text(yaml.safe_dump(settings))
    return path


def _command(line: str, config: Path) -> list[str]:
    words = shlex.split(line.replace(INSTALLED, str(BIN / "braid")))
    return [str(config) if w == "/etc/braid/serve.yaml" else w for w in words]


def test_braid_serve_runs_and_stops_as_its_unit_says(
    tmp_path: Path, throwaway_postgres: str
) -> None:
    issue_certificate(tmp_path, "server", issue_certificate(tmp_path, "ca", None))
    port = free_port()
    config = _settings(tmp_path, port)
    service = _unit(UNITS / "braid-serve.service")["Service"]
    env = {**os.environ, "BRAID_DATABASE_URL": throwaway_postgres}
    env = {k: v for k, v in env.items() if not k.startswith("BRAID_") or k == "BRAID_DATABASE_URL"}
    before = subprocess.run(
        _command(service["ExecStartPre"], config),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert before.returncode == 0, before.stderr
    token = subprocess.run(
        [
            str(BIN / "braid"),
            "token",
            "create",
            "-u",
            "olga",
            "--role",
            "operator",
            "-c",
            str(config),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.splitlines()[0]
    server = subprocess.Popen(
        _command(service["ExecStart"], config),
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        trusted = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
        with httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=trusted) as client:
            wait_healthy(f"https://127.0.0.1:{port}", server, timeout=60, verify=trusted)
            booked = client.post(
                "/v1/reservations",
                headers={"Authorization": f"Bearer {token}"},
                json={
                    "src": "ORNL",
                    "dst": "NERSC",
                    "bandwidth": "10G",
                    "duration": "1h",
                    "mode": "earliest",
                    "not_before": int(time.time()) + 3600,
                },
            )
            assert booked.status_code == 201, booked.text
    finally:
        server.send_signal(getattr(signal, service["KillSignal"]))
        out, err = server.communicate(timeout=float(service["TimeoutStopSec"]))
    assert server.returncode == 0, err
    assert "braid stopped" in out
