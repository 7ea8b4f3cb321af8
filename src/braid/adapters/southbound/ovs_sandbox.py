"""A private Open vSwitch (userspace datapath) for tests, benchmarks and trials.

It runs ovsdb-server and ovs-vswitchd (`--disable-system`) with a run
directory and a network namespace of their own, so it never touches the
machine's system OVS, whose userspace datapath already owns the tap device
`ovs-netdev`. Its bridges (`datapath_type=netdev`, `fail_mode=secure`) are
for programming and reading flow tables; they carry no host traffic. A
controller that the bridges should reach on 127.0.0.1 runs inside the
namespace (`command_in_namespace`). Needs root, `ip` and Open vSwitch.

Command line (also `scripts/ovs-userspace`):
    python -m braid.adapters.southbound.ovs_sandbox start|restart-switch|stop DIR
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Final

__all__ = ["OvsSandbox", "missing_tools"]

SCHEMA: Final = Path("/usr/share/openvswitch/vswitch.ovsschema")
TOOLS: Final = ("ovsdb-server", "ovsdb-tool", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl", "ip")


def missing_tools() -> list[str]:
    """Programs the sandbox needs that are not installed."""
    return [t for t in TOOLS if shutil.which(t) is None]


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie awaiting its reaper does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class OvsSandbox:
    """Open vSwitch daemons living in `rundir` and a namespace named after it."""

    def __init__(self, rundir: Path) -> None:
        self.rundir = rundir.resolve()
        self.netns = f"braid-ovs-{zlib.crc32(str(self.rundir).encode()):08x}"
        self.env = {"OVS_RUNDIR": str(self.rundir), "OVS_LOGDIR": str(self.rundir)}

    @property
    def db(self) -> str:
        return f"unix:{self.rundir}/db.sock"

    def _run(self, *command: str) -> str:
        done = subprocess.run(
            command, capture_output=True, text=True, env={**os.environ, **self.env}, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}")
        return done.stdout

    def start(self) -> None:
        """Start both daemons; on failure stop what was started and raise."""
        self.rundir.mkdir(parents=True, exist_ok=True)
        try:
            conf = self.rundir / "conf.db"
            if not conf.exists():
                self._run("ovsdb-tool", "create", str(conf), str(SCHEMA))
            if self.netns not in self._run("ip", "netns", "list"):
                self._run("ip", "netns", "add", self.netns)
            self._run("ip", "netns", "exec", self.netns, "ip", "link", "set", "lo", "up")
            self._run(
                "ovsdb-server",
                str(conf),
                f"--remote=p{self.db}",
                *self._daemon_args("ovsdb-server"),
            )
            self.vsctl("--no-wait", "init")
            self.start_switch()
        except BaseException:
            self.stop()
            raise

    def _daemon_args(self, name: str) -> list[str]:
        return [
            f"--pidfile={self.rundir}/{name}.pid",
            f"--unixctl={self.rundir}/{name}.ctl",
            f"--log-file={self.rundir}/{name}.log",
            "--detach",
            "--no-chdir",
        ]

    def start_switch(self) -> None:
        self._run(
            *self.command_in_namespace(["ovs-vswitchd", self.db, "--disable-system"]),
            *self._daemon_args("ovs-vswitchd"),
        )
        self.vsctl("--timeout=10", "wait-until", "Open_vSwitch", ".")

    def restart_switch(self) -> None:
        """Restart ovs-vswitchd alone: bridges stay configured, flow tables are lost."""
        self._kill("ovs-vswitchd")
        self.start_switch()

    def stop(self) -> None:
        self._kill("ovs-vswitchd")
        self._kill("ovsdb-server")
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        if self.netns in listed:
            subprocess.run(["ip", "netns", "delete", self.netns], check=False)

    def _kill(self, name: str) -> None:
        """Kill a daemon outright: the sandbox is disposable, and a crash is what we test."""
        pidfile = self.rundir / f"{name}.pid"
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        for _ in range(250):
            if not _alive(pid):
                break
            time.sleep(0.02)
        pidfile.unlink(missing_ok=True)

    def command_in_namespace(self, command: Sequence[str]) -> list[str]:
        """`command` prefixed so that it runs in the switch's network namespace."""
        return ["ip", "netns", "exec", self.netns, *command]

    def vsctl(self, *args: str) -> str:
        return self._run("ovs-vsctl", f"--db={self.db}", *args)

    def add_bridge(self, name: str, dpid: int, controller: str | None = None) -> None:
        """A netdev bridge with datapath id `dpid`, OpenFlow 1.3, no flows of its own.

        With `controller`, the bridge connects to it and retries every second at
        most (OVS backs off up to 8 s by default, slow for tests).
        """
        args = [
            "--", "--may-exist", "add-br", name,
            "--", "set", "bridge", name, "datapath_type=netdev", "fail_mode=secure",
            "protocols=OpenFlow13", f"other-config:datapath-id={dpid:016x}",
        ]  # fmt: skip
        if controller is not None:
            args += [
                "--", "--id=@c", "create", "controller", f'target="{controller}"',
                "max_backoff=1000",
                "--", "set", "bridge", name, "controller=@c",
            ]  # fmt: skip
        self.vsctl(*args)

    def ofctl(self, *args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["ovs-ofctl", "-O", "OpenFlow13", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**os.environ, **self.env},
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"ovs-ofctl {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    @property
    def controller_api(self) -> str:
        """Where `start_controller`'s controller serves braid's API (a Unix socket)."""
        return f"unix:{self.rundir}/controller-api.sock"

    def start_controller(
        self,
        openflow_port: int = 6653,
        state_file: Path | None = None,
        token_file: Path | None = None,
        extra: Sequence[str] = (),
    ) -> subprocess.Popen[bytes]:
        """`braid controller` inside the namespace, reachable at `controller_api`.

        With `token_file`, its API wants the token in that file (without one it
        runs with `--insecure`, on its owner-only socket); `extra` are
        more of its options. Waits until its API socket exists; the caller
        stops it (terminate, wait).
        """
        command = [
            sys.executable,
            "-m",
            "braid.adapters.southbound.osken_main",
            "--api",
            self.controller_api,
            "--openflow",
            f"127.0.0.1:{openflow_port}",
            *(["--state", str(state_file)] if state_file is not None else []),
            # Without a token file, --insecure: the API is a Unix socket only its
            # owner may open, in the sandbox's own namespace, for tests only.
            *(["--api-token-file", str(token_file)] if token_file is not None else ["--insecure"]),
            *extra,
        ]
        socket_path = Path(self.controller_api[len("unix:") :])
        socket_path.unlink(missing_ok=True)
        with (self.rundir / "controller.log").open("ab") as log:
            process = subprocess.Popen(self.command_in_namespace(command), stdout=log, stderr=log)
        for _ in range(200):
            if socket_path.exists() or process.poll() is not None:
                break
            time.sleep(0.05)
        if process.poll() is not None or not socket_path.exists():
            process.kill()
            raise RuntimeError(f"controller did not start; see {self.rundir}/controller.log")
        return process


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "restart-switch", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    sandbox = OvsSandbox(Path(argv[1]))
    {"start": sandbox.start, "restart-switch": sandbox.restart_switch, "stop": sandbox.stop}[
        argv[0]
    ]()
    if argv[0] == "start":
        print(f"OVS_RUNDIR={sandbox.rundir}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
