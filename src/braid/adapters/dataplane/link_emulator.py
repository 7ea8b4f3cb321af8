"""`LinkEmulator`: one `braid-dp link` process between two interfaces, driven over its socket."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Final, TextIO

from braid.adapters.dataplane.binary import find_braid_dp
from braid.adapters.dataplane.protocol import (
    Direction,
    DirectionCounters,
    LinkSettings,
    decode_reply,
    encode_request,
    encode_set,
    parse_counters,
)

__all__ = ["LinkEmulator", "LinkEmulatorError"]

_START_TIMEOUT: Final = 5.0
_REPLY_TIMEOUT: Final = 5.0


class LinkEmulatorError(RuntimeError):
    """braid-dp did not start, died, or its control socket broke."""


class LinkEmulator:
    """Forwards between interfaces `a` and `b` (in `namespace`, if given) with the settings.

    Use as a context manager, or call `start()` and `stop()`.
    """

    def __init__(
        self,
        a: str,
        b: str,
        *,
        namespace: str | None = None,
        settings: LinkSettings | None = None,
        binary: Path | None = None,
        seed: int = 1,
    ) -> None:
        self.a, self.b, self.namespace = a, b, namespace
        self._settings = settings
        self._binary = binary
        self._seed = seed
        self._rundir: Path | None = None
        self._process: subprocess.Popen[str] | None = None
        self._socket: socket.socket | None = None
        self._stream: TextIO | None = None

    @property
    def control_path(self) -> Path:
        if self._rundir is None:
            raise LinkEmulatorError("not started")
        return self._rundir / "control.sock"

    def argv(self, binary: Path) -> list[str]:
        command = [str(binary), "link", "--a", self.a, "--b", self.b]
        command += ["--control", str(self.control_path), "--seed", str(self._seed)]
        if self.namespace:
            return ["ip", "netns", "exec", self.namespace, *command]
        return command

    def start(self) -> None:
        binary = self._binary or find_braid_dp()
        # A short private directory: Unix socket paths are limited to about 100 bytes.
        self._rundir = Path(tempfile.mkdtemp(prefix="braid-dp-"))
        self._process = subprocess.Popen(
            self.argv(binary),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            self._connect()
            if self._settings is not None and self._settings.as_fields():
                self.set(self._settings)
        except BaseException:
            self.stop()
            raise

    def _connect(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            self._fail_if_exited()
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(_REPLY_TIMEOUT)
                sock.connect(str(self.control_path))
            except OSError as error:
                sock.close()
                if time.monotonic() > deadline:
                    raise LinkEmulatorError(f"braid-dp's control socket: {error}") from error
                time.sleep(0.02)
                continue
            self._socket = sock
            self._stream = sock.makefile("rw", encoding="utf-8", newline="\n")
            return

    def _fail_if_exited(self) -> None:
        process = self._process
        if process is None:
            raise LinkEmulatorError("not started")
        if process.poll() is not None:
            error = process.stderr.read().strip() if process.stderr else ""
            raise LinkEmulatorError(f"braid-dp exited with {process.returncode}: {error}")

    def request(self, line: str) -> dict[str, object]:
        """Sends one raw request line; the decoded reply (`ControlError` if refused)."""
        if self._stream is None:
            raise LinkEmulatorError("not started")
        try:
            self._stream.write(line if line.endswith("\n") else line + "\n")
            self._stream.flush()
            reply = self._stream.readline()
        except OSError as error:
            raise LinkEmulatorError(f"braid-dp's control socket: {error}") from error
        if not reply:
            self._fail_if_exited()
            raise LinkEmulatorError("braid-dp closed the control connection")
        return decode_reply(reply)

    def set(self, settings: LinkSettings, direction: Direction = "both") -> dict[str, object]:
        """Changes the settings; returns the config of the directions changed."""
        return self.request(encode_set(settings, direction))

    def config(self, direction: Direction = "both") -> dict[str, object]:
        return self.request(encode_request("get", direction))

    def cut(self, direction: Direction = "both") -> dict[str, object]:
        """Drops everything, including what is in flight, until `restore`."""
        return self.request(encode_request("cut", direction))

    def restore(self, direction: Direction = "both") -> dict[str, object]:
        return self.request(encode_request("restore", direction))

    def counters(self) -> dict[str, DirectionCounters]:
        return parse_counters(self.request(encode_request("counters")))

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

    def __enter__(self) -> LinkEmulator:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
