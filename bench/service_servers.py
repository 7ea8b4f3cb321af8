"""`braid serve` processes for the service benchmark, and where the CPU went.

Each server is a real subprocess on a free port; `serving` starts replicas
one after the other and stops them afterwards. CPU is read from /proc
(Linux; empty elsewhere): the servers, every `postgres` process, this
process (the clients) and the whole machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from braid.adapters.free_ports import free_port
from service_store import DEFAULT_CAPACITY, World

START_TIMEOUT_S = 180.0


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path


def launch(database: str, world: World, log: Path, source: Path | None = None) -> Server:
    """`braid serve` on `database`; `source`: a braid `src` folder to run instead of this one."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAID_")}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    command = [sys.executable, "-m", "braid.cli.main", "serve", "--database", database,
               "--topology", str(world.graphml), "--default-capacity", DEFAULT_CAPACITY,
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    return Server(process, f"http://127.0.0.1:{port}", log)


def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"braid serve exited:\n{server.log.read_text()[-3000:]}")
        try:
            if httpx.get(server.url + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"braid serve did not answer in {START_TIMEOUT_S} s: {server.log}")


@contextmanager
def serving(
    database: str, world: World, folder: Path, count: int, source: Path | None = None
) -> Iterator[list[Server]]:
    """`count` replicas on one database (started one after the other), stopped afterwards."""
    servers: list[Server] = []
    try:
        for _ in range(count):
            log = folder / f"serve-{len(list(folder.glob('serve-*.log')))}.log"
            servers.append(launch(database, world, log, source))
            wait_ready(servers[-1])
        yield servers
    finally:
        for server in servers:
            server.process.terminate()
        for server in servers:
            try:
                server.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.process.kill()
                server.process.wait()


# -- CPU accounting (Linux /proc; empty elsewhere) ---------------------------------------


def _proc_cpu_s(pid: int, *, reaped: bool = False) -> float:
    """User + system CPU seconds of one process (0 if gone); `reaped` adds its exited children's."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def _named(name: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == name:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _machine_busy_s() -> float:
    """CPU seconds all cores spent busy since boot (every process on the machine)."""
    try:
        values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cpu_snapshot(server_pids: list[int]) -> dict[str, float]:
    if not Path("/proc/stat").exists():
        return {}
    return {
        "servers": sum(_proc_cpu_s(pid) for pid in server_pids),
        # Backends that exit (pool overflow) leave their CPU to the postmaster's children.
        "postgres": sum(_proc_cpu_s(pid, reaped=True) for pid in _named("postgres")),
        "clients": time.process_time(),
        "machine": _machine_busy_s(),
    }


def cpu_per_post_ms(
    before: dict[str, float], after: dict[str, float], posts: int
) -> dict[str, float]:
    """CPU ms per POST by who spent it; `others` is the rest of the machine (not braid)."""
    if not before or not posts:
        return {}
    out = {k: (after[k] - before[k]) * 1e3 / posts for k in before}
    out["others"] = out.pop("machine") - out["servers"] - out["postgres"] - out["clients"]
    return out
