"""A server whose port another process holds stops with one line: the address and the option.

Every braid server says it the same way (`braid.adapters.listening`), with no
traceback: `braid serve`, `agent`, `orchestrator`, `controller`, `monitor`.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from braid.adapters.free_ports import free_port
from braid.adapters.listening import AddressInUseError, listening_socket, taken

BRAID = str(Path(sys.executable).parent / "braid")
EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "braid" / "examples"
FIG6A = EXAMPLES / "fig6a.yaml"


@pytest.fixture
def held() -> Iterator[int]:
    """A port held by "another process": TCP listening, and UDP bound, on all addresses."""
    port = free_port()
    with socket.socket() as tcp, socket.socket(type=socket.SOCK_DGRAM) as udp:
        tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tcp.bind(("0.0.0.0", port))
        tcp.listen()
        udp.bind(("0.0.0.0", port))
        yield port


def _said(tmp_path: Path, *args: str) -> list[str]:
    done = subprocess.run([BRAID, *args], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "RuntimeError" not in done.stderr, done.stderr
    # The agent warns first that it has no peer policy (a log line, not the error).
    # --insecure's warning is said on every start: it is not the error under test.
    said = [line for line in done.stderr.splitlines() if line and "no peer policy" not in line]
    return [line for line in said if "warning: --insecure" not in line]


def _one_line(lines: list[str], address: str, option: str) -> None:
    assert len(lines) == 1, lines
    assert f"cannot listen on {address}: the address is already in use" in lines[0]
    assert f"pick a free port with {option}" in lines[0]


def test_serve(tmp_path: Path, held: int) -> None:
    lines = _said(tmp_path, "serve", "-t", str(EXAMPLES / "science-net.yaml"), "--port", str(held))
    _one_line(lines, f"127.0.0.1:{held}", "--port")
    assert not (tmp_path / "braid.db").exists()  # nothing opened before the port


def test_agent_on_its_listen_address_and_on_the_file_s(tmp_path: Path, held: int) -> None:
    address = f"127.0.0.1:{held}"
    common = ["agent", "-d", "site-a", "--store", str(tmp_path / "a.db"), "--insecure"]
    _one_line(_said(tmp_path, *common, "-t", str(FIG6A), "--listen", address), address, "--listen")
    moved = tmp_path / "fig6a.yaml"
    moved.write_text(FIG6A.read_text().replace('"127.0.0.1:7101"', f'"{address}"'))
    lines = _said(tmp_path, *common, "-t", str(moved))
    _one_line(lines, address, "--listen")
    assert f"site-a's agent address in {moved}" in lines[0]


def test_orchestrator(tmp_path: Path, held: int) -> None:
    address = f"127.0.0.1:{held}"
    args = ["orchestrator", "-t", str(FIG6A), "--store", str(tmp_path / "o.db"), "--insecure"]
    _one_line(_said(tmp_path, *args, "--listen", address), address, "--listen")


def test_monitor_echo_and_metrics(tmp_path: Path, held: int) -> None:
    base = ["monitor", "--target", "127.0.0.1", "--duration", "1"]
    lines = _said(tmp_path, *base, "--echo-port", str(held))
    _one_line(lines, f"0.0.0.0:{held}", "--echo-port")
    lines = _said(tmp_path, *base, "--metrics-port", str(held), "--metrics-open")
    _one_line(lines, f"127.0.0.1:{held}", "--metrics-port")


@pytest.mark.skipif(importlib.util.find_spec("os_ken") is None, reason="needs os-ken")
def test_controller_api_and_openflow(tmp_path: Path, held: int) -> None:
    address, spare = f"127.0.0.1:{held}", f"127.0.0.1:{free_port()}"
    lines = _said(tmp_path, "controller", "--api", address, "--openflow", spare, "--insecure")
    _one_line(lines, address, "--api")
    lines = _said(tmp_path, "controller", "--api", spare, "--openflow", address, "--insecure")
    _one_line(lines, address, "--openflow")


def test_the_helper_binds_a_free_port_and_names_a_taken_one(held: int) -> None:
    assert taken(f"127.0.0.1:{held}") and not taken("127.0.0.1:0")
    with pytest.raises(AddressInUseError) as raised:
        listening_socket("127.0.0.1", held)
    assert raised.value.address == f"127.0.0.1:{held}"
    port = free_port()
    with listening_socket("127.0.0.1", port) as sock:
        assert sock.getsockname() == ("127.0.0.1", port) and taken(f"127.0.0.1:{port}")
