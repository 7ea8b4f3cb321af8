"""Driving the OpenNSA peer (`../shared/peers/opennsa/run-opennsa` from the repo root) and a
`braid serve` with NSI on, for the NSI interoperability tests and the NSI bench.

The peer is test equipment outside the repository: a real, unmodified
OpenNSA with its requester CLI `onsa`. Nothing here copies from it; it is
run as a program.
"""

from __future__ import annotations

import fcntl
import os
import re
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from braid.adapters.free_ports import free_port
from braid.testing.serving import wait_healthy

__all__ = [
    "NARROW_NRM",
    "PEER_SCRIPT",
    "BraidNsi",
    "NsiTls",
    "Onsa",
    "OnsaResult",
    "OnsaTls",
    "PeerMissingError",
    "braid_with_nsi",
    "opennsa_peer",
    "peer_script",
    "requester_network",
    "tls_venv",
    "wait_for_log",
]

PEER_SCRIPT = "../shared/peers/opennsa/run-opennsa"  # relative to the repository's root
REQUESTER = "requester.test:nsa"  # onsa prefixes urn:ogf:network: to what it is given


class PeerMissingError(RuntimeError):
    """The OpenNSA peer is not there or would not start; the message says what to do."""


def peer_script(root: Path) -> Path:
    """The peer's script, its venv set up (once, whichever test process gets here first)."""
    script = (root / PEER_SCRIPT).resolve()
    if not os.access(script, os.X_OK):
        raise PeerMissingError(f"no OpenNSA peer at {PEER_SCRIPT} (from the repository's root)")
    lock = Path(tempfile.gettempdir()) / "braid-opennsa-setup.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # parallel test workers must not build one venv twice
        argv = [str(script), "onsa", "--version"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise PeerMissingError(f"the OpenNSA peer cannot be set up:\n{done.stdout}{done.stderr}")
    return script


@dataclass(frozen=True)
class OnsaResult:
    output: str
    seconds: float  # the whole onsa run, its own start-up included

    @property
    def connection_id(self) -> str:
        found = re.search(r"Id (\S+) at", self.output)
        if found is None:
            raise AssertionError(f"onsa reported no connection id:\n{self.output}")
        return found.group(1)

    @property
    def states(self) -> tuple[str, ...]:
        """(reservation, provision, lifecycle) of the first connection a query listed."""
        found = re.search(r"States\s+(.+)", self.output)
        if found is None:
            raise AssertionError(f"onsa listed no connection:\n{self.output}")
        return tuple(s.strip() for s in found.group(1).split(","))

    def all_states(self) -> list[tuple[str, ...]]:
        return [
            tuple(s.strip() for s in m.split(","))
            for m in re.findall(r"States\s+(.+)", self.output)
        ]

    def live(self) -> list[tuple[str, ...]]:
        """The listed connections still held, or committed and not terminated (a failed
        reserve holds nothing)."""
        return [
            s
            for s in self.all_states()
            if s[0] == "ReserveHeld" or s[::2] == ("ReserveStart", "Created")
        ]


# The peer's venv takes the newest pyOpenSSL, whose X509 lost `get_extension`, which
# the service-identity its Twisted needs still calls: every TLS handshake of onsa then
# fails in its host check. onsa with a client certificate runs from a venv of its own,
# made by the same script, with the last pyOpenSSL (and a cryptography) that go with it.
TLS_VENV = Path(tempfile.gettempdir()) / "opennsa-venv-tls"
TLS_PINS = ("pyOpenSSL==23.2.0", "cryptography==41.0.7")


def tls_venv(script: Path, venv: Path = TLS_VENV) -> Path:
    """The venv for onsa over TLS (set up once, whichever test process gets here first)."""
    lock = Path(tempfile.gettempdir()) / "braid-opennsa-tls-setup.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        env = {**os.environ, "OPENNSA_VENV": str(venv)}
        argv = [str(script), "onsa", "--version"]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=900)
        if done.returncode == 0 and not (venv / ".braid-tls-pins").exists():
            pip = [str(venv / "bin" / "pip"), "install", "-q", *TLS_PINS]
            done = subprocess.run(pip, capture_output=True, text=True, timeout=900)
            if done.returncode == 0:
                (venv / ".braid-tls-pins").write_text("\n".join(TLS_PINS) + "\n")
    if done.returncode != 0:
        raise PeerMissingError(f"onsa's TLS venv cannot be set up:\n{done.stdout}{done.stderr}")
    return venv


@dataclass(frozen=True)
class OnsaTls:
    """onsa's client certificate for an HTTPS provider: its PEM certificate and key, the
    folder of CA certificates (`NAME.0`) it verifies the provider with, and the venv
    (`tls_venv`) it runs from."""

    certificate: Path
    key: Path
    ca_dir: Path
    venv: Path | None = None

    def args(self) -> list[str]:
        return ["-l", str(self.certificate), "-k", str(self.key), "-i", str(self.ca_dir)]


@dataclass(frozen=True)
class Onsa:
    """OpenNSA's requester CLI aimed at one provider; confirmations come back to `callback`."""

    script: Path
    url: str
    provider: str  # e.g. braid.test:nsa
    callback: int
    requester: str = REQUESTER  # whose connections it sees (a provider shows each its own)
    tls: OnsaTls | None = None  # a client certificate, for an https provider

    @property
    def reply_to(self) -> str:
        """Where onsa asks for its confirmations (its callback stays plain HTTP)."""
        return f"http://127.0.0.1:{self.callback}/NSI/services/RequesterService2"

    @property
    def requester_nsa(self) -> str:
        return f"urn:ogf:network:{self.requester}"

    def run(self, command: str, *args: str, timeout: float = 60) -> OnsaResult:
        argv = [str(self.script), "onsa", command, "-u", self.url, "-p", self.provider]
        argv += ["-r", self.requester, "-h", "127.0.0.1", "-o", str(self.callback), *args]
        argv += self.tls.args() if self.tls is not None else []
        env = dict(os.environ)
        if self.tls is not None and self.tls.venv is not None:
            env["OPENNSA_VENV"] = str(self.tls.venv)
        began = time.perf_counter()
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
        return OnsaResult(done.stdout + done.stderr, time.perf_counter() - began)

    def reserve(self, source: str, dest: str, mbps: int, start: str, end: str) -> OnsaResult:
        window = ["-a", start, "-e", end]
        return self.run("reserveonly", "-s", source, "-d", dest, "-b", str(mbps), *window)

    def step(self, command: str, connection_id: str) -> OnsaResult:
        return self.run(command, "-c", connection_id)


@contextmanager
def opennsa_peer(
    script: Path,
    home: Path,
    domain: str = "peer.test",
    *,
    nrm: Path | None = None,
    peers: str | None = None,
) -> Iterator[str]:
    """A running OpenNSA (dud backend) on a free port; yields its provider URL; stops it after.

    `nrm` is its port file (default: ports p1-p3, VLANs 1780-1789); `peers` the
    discovery document URLs of the providers it aggregates over.
    """
    port = free_port()
    env = {**os.environ, "OPENNSA_HOME": str(home)}
    argv = [str(script), "start", "--port", str(port), "--domain", domain]
    argv += ["--nrm", str(nrm)] if nrm is not None else []
    argv += ["--peers", peers] if peers is not None else []
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=False)
    try:
        if done.returncode != 0:
            raise PeerMissingError(f"the OpenNSA peer did not start:\n{done.stdout}{done.stderr}")
        yield f"http://127.0.0.1:{port}/NSI/services/CS2"
    finally:
        stop = [str(script), "stop", "--port", str(port)]
        subprocess.run(stop, capture_output=True, env=env, timeout=60, check=False)


def wait_for_log(home: Path, text: str, timeout: float = 60) -> None:
    """Wait until the peer's log (in `home`) says `text`, e.g. that it found a peer."""
    log = home / "opennsa.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(encoding="utf-8", errors="replace"):
            return
        time.sleep(0.2)
    raise PeerMissingError(f"the OpenNSA peer never logged {text!r} (see {log})")


@dataclass(frozen=True)
class NsiTls:
    """braid serve's HTTPS for NSI: its certificate and key, the CA file that signs the
    requesters' certificates (and braid's own, here), and the requesters' allow-list."""

    certificate: Path
    key: Path
    client_ca: Path
    requesters: Path

    def args(self) -> list[str]:
        return [
            "--tls-cert", str(self.certificate), "--tls-key", str(self.key),
            "--tls-client-ca", str(self.client_ca), "--nsi-requesters", str(self.requesters),
        ]  # fmt: skip

    def trusting(self) -> ssl.SSLContext:
        """A client context that trusts braid's certificate (for REST calls and health)."""
        return ssl.create_default_context(cafile=str(self.client_ca))


@dataclass(frozen=True)
class BraidNsi:
    url: str  # the server's base URL
    database: str
    pid: int
    verify: ssl.SSLContext | bool = True  # what an HTTPS client must trust to reach it

    @property
    def provider(self) -> str:
        return f"{self.url}/NSI/services/CS2"


@contextmanager
def braid_with_nsi(
    braid: Path,
    topology: Path,
    workdir: Path,
    domain: str = "braid.test",
    tls: NsiTls | None = None,
) -> Iterator[BraidNsi]:
    """`braid serve --nsi-domain DOMAIN` on a free port over a fresh SQLite file.

    With `tls`, over HTTPS, requesters known by their client certificates (the
    default of braid serve); without, with --insecure (any requester at its word)."""
    database = f"sqlite:///{workdir / 'braid.db'}"
    port = free_port()
    # The interoperability runs book at fixed dates years ahead: no default horizon.
    env = {**os.environ, "BRAID_TICK_SECONDS": "1", "BRAID_BOOKING_HORIZON_DAYS": "0"}
    argv = [str(braid), "serve", "--topology", str(topology), "--database", database]
    argv += ["--host", "127.0.0.1", "--port", str(port), "--nsi-domain", domain]
    argv += tls.args() if tls is not None else ["--insecure"]
    with (workdir / "serve.log").open("w") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        scheme = "https" if tls is not None else "http"
        url = f"{scheme}://127.0.0.1:{port}"
        verify: ssl.SSLContext | bool = tls.trusting() if tls is not None else True
        try:
            wait_healthy(url, process, verify=verify)
            yield BraidNsi(url, database, process.pid, verify)
        finally:
            process.terminate()
            process.wait(timeout=15)


# OpenNSA's ports for braid as its requester: p1 carries two VLANs only, so that
# another requester holding both leaves braid none.
NARROW_NRM = (
    "ethernet p1 - vlan:1780-1781 1000 em1 -\n"
    "ethernet p2 - vlan:1780-1789 1000 em2 -\n"
    "ethernet p3 - vlan:1780-1789 1000 em3 -\n"
)


def requester_network(provider: str, domain: str, requester: str) -> dict[str, Any]:
    """Sites a and b (braid agents) through an OpenNSA domain `onsa` (kind nsi) whose
    provider is at `provider`: its ports p1 and p3 are braid's nodes onsa-p1 and onsa-p3."""
    network = f"urn:ogf:network:{domain}:topology"
    peer = {
        "provider": provider,
        "nsa": f"urn:ogf:network:{domain}:nsa",
        "requester": requester,
        "stps": {"onsa-p1": f"{network}:p1", "onsa-p3": f"{network}:p3"},
    }
    border = {"capacity": "1G"}
    return {
        "domains": [
            {"id": "site-a", "kind": "site"},
            {"id": "onsa", "kind": "nsi", "nsi": peer},
            {"id": "site-b", "kind": "site"},
        ],
        "nodes": [
            {"id": "a-host", "domain": "site-a"},
            {"id": "a-edge", "domain": "site-a"},
            {"id": "onsa-p1", "domain": "onsa"},
            {"id": "onsa-p3", "domain": "onsa"},
            {"id": "b-edge", "domain": "site-b"},
            {"id": "b-host", "domain": "site-b"},
        ],
        "links": [
            {"id": "a-lan", "a": "a-host", "b": "a-edge", "capacity": "10G"},
            {"id": "a-onsa", "a": "a-edge", "b": "onsa-p1", **border, "vlans": "1780-1781"},
            {"id": "onsa-b", "a": "onsa-p3", "b": "b-edge", **border, "vlans": "1780-1789"},
            {"id": "b-lan", "a": "b-edge", "b": "b-host", "capacity": "10G"},
        ],
    }
