"""A `braid-dp` process and its control socket: started, asked, stopped.

The shared part of `LinkEmulator`'s and `MultipathEdge`'s life cycle: each
says how to start its element (`element_argv`) and what to send once it runs
(`after_start`).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final, Self, TextIO

from braid.adapters.dataplane.binary import find_braid_dp
from braid.adapters.dataplane.protocol import decode_reply

__all__ = ["BraidDpElement", "ElementError"]

_START_TIMEOUT: Final = 5.0
_REPLY_TIMEOUT: Final = 5.0


class ElementError(RuntimeError):
    """braid-dp did not start, died, or its control socket broke."""


class BraidDpElement:
    """One braid-dp element in `namespace` (if given); a context manager."""

    error: type[ElementError] = ElementError

    def __init__(self, *, namespace: str | None = None, binary: Path | None = None) -> None:
        self.namespace = namespace
        self._binary = binary
        self._rundir: Path | None = None
        self._process: subprocess.Popen[str] | None = None
        self._socket: socket.socket | None = None
        self._stream: TextIO | None = None
        self._launcher: tuple[str, ...] = ()
        self._env: dict[str, str] = {}

    def launched(self, launcher: Sequence[str] = (), env: Mapping[str, str] | None = None) -> Self:
        """Start under `launcher` (e.g. `mnexec -a PID`, to enter a Mininet host's
        namespaces) with `env` added to the environment (e.g. the mark by which
        `braid emulate clean` finds what an emulation left running)."""
        self._launcher = tuple(launcher)
        self._env = dict(env or {})
        return self

    @property
    def rundir(self) -> Path:
        if self._rundir is None:
            raise self.error("not started")
        return self._rundir

    @property
    def control_path(self) -> Path:
        return self.rundir / "control.sock"

    def element_argv(self, binary: Path) -> list[str]:
        """braid-dp's command line (without the namespace)."""
        raise NotImplementedError

    def before_start(self) -> None:
        """Writes what the command line refers to (in `rundir`)."""

    def after_start(self) -> None:
        """Configures the running element."""

    def argv(self, binary: Path) -> list[str]:
        command = self.element_argv(binary)
        if self.namespace:
            command = ["ip", "netns", "exec", self.namespace, *command]
        return [*self._launcher, *command]

    def start(self) -> None:
        binary = self._binary or find_braid_dp()
        # A short private directory: Unix socket paths are limited to about 100 bytes.
        self._rundir = Path(tempfile.mkdtemp(prefix="braid-dp-"))
        try:
            self.before_start()
            self._process = subprocess.Popen(
                self.argv(binary),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, **self._env} if self._env else None,
            )
            self._connect()
            self.after_start()
        except BaseException:
            self.stop()
            raise

    def _connect(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            self._fail_if_exited()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(_REPLY_TIMEOUT)
                sock.connect(str(self.control_path))
            except OSError as error:
                sock.close()
                if time.monotonic() > deadline:
                    raise self.error(f"braid-dp's control socket: {error}") from error
                time.sleep(0.02)
                continue
            self._socket = sock
            self._stream = sock.makefile("rw", encoding="utf-8", newline="\n")
            return

    def _fail_if_exited(self) -> None:
        process = self._process
        if process is None:
            raise self.error("not started")
        if process.poll() is not None:
            error = process.stderr.read().strip() if process.stderr else ""
            raise self.error(f"braid-dp exited with {process.returncode}: {error}")

    def request(self, line: str) -> dict[str, object]:
        """Sends one raw request line; the decoded reply (`ControlError` if refused)."""
        if self._stream is None:
            raise self.error("not started")
        try:
            self._stream.write(line if line.endswith("\n") else line + "\n")
            self._stream.flush()
            reply = self._stream.readline()
        except OSError as error:
            raise self.error(f"braid-dp's control socket: {error}") from error
        if not reply:
            self._fail_if_exited()
            raise self.error("braid-dp closed the control connection")
        return decode_reply(reply)

    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def stop(self) -> None:
        """Stops braid-dp and removes its socket; safe to call twice."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        process, self._process = self._process, None
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stderr:
                process.stderr.close()
        if self._rundir is not None:
            shutil.rmtree(self._rundir, ignore_errors=True)
            self._rundir = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
