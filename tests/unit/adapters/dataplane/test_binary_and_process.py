"""Finding braid-dp and what LinkEmulator says when it cannot run it (no root needed)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from braid.adapters.dataplane import BraidDpMissingError, LinkEmulator, LinkEmulatorError
from braid.adapters.dataplane.binary import find_braid_dp, repository_build
from braid.adapters.dataplane.element import BraidDpElement


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_environment_variable_wins(tmp_path: Path) -> None:
    binary = _script(tmp_path / "braid-dp", "exit 0")
    assert find_braid_dp({"BRAID_DP": str(binary)}) == binary


def test_a_wrong_environment_variable_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(BraidDpMissingError, match="BRAID_DP="):
        find_braid_dp({"BRAID_DP": str(tmp_path / "nothing")})


def test_missing_binary_says_how_to_build_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "braid.adapters.dataplane.binary.repository_build", lambda: Path("/nonexistent/braid-dp")
    )
    monkeypatch.setattr("shutil.which", lambda name: None)
    with pytest.raises(BraidDpMissingError, match="make"):
        find_braid_dp({})


def test_the_repository_build_is_under_dataplane() -> None:
    assert repository_build().parts[-4:] == ("dataplane", "target", "release", "braid-dp")


def test_a_binary_that_exits_is_reported_with_its_message(tmp_path: Path) -> None:
    binary = _script(tmp_path / "braid-dp", 'echo "interface nope: No such device" >&2; exit 2')
    emulator = LinkEmulator("nope", "nada", binary=binary)
    with pytest.raises(LinkEmulatorError, match="exited with 2: interface nope"):
        emulator.start()
    emulator.stop()  # twice is fine


def test_requests_before_start_are_refused() -> None:
    with pytest.raises(LinkEmulatorError, match="not started"):
        LinkEmulator("a", "b").counters()


def test_the_command_line_runs_in_the_namespace(tmp_path: Path) -> None:
    emulator = LinkEmulator("x1", "y1", namespace="bdpL", seed=4)
    emulator._rundir = tmp_path  # what start() would make
    argv = emulator.argv(Path("/bin/braid-dp"))
    assert argv[:5] == ["ip", "netns", "exec", "bdpL", "/bin/braid-dp"]
    assert argv[5:] == [
        "link",
        "--a",
        "x1",
        "--b",
        "y1",
        "--control",
        str(tmp_path / "control.sock"),
        "--seed",
        "4",
    ]


def test_vlan_and_realtime_are_passed_on(tmp_path: Path) -> None:
    emulator = LinkEmulator("x1", "y1", vlan=101, realtime=True)
    emulator._rundir = tmp_path
    assert emulator.argv(Path("/bin/braid-dp"))[-4:] == ["--vlan", "101", "--realtime", "on"]


class _Echo(BraidDpElement):
    def element_argv(self, binary: Path) -> list[str]:
        return [str(binary), "echo"]


def test_a_launcher_and_environment_wrap_the_command(tmp_path: Path) -> None:
    element = _Echo(namespace="ns1").launched(["mnexec", "-a", "42"], {"BRAID_EMULATION": "1"})
    argv = element.argv(tmp_path / "braid-dp")
    assert argv == [
        "mnexec",
        "-a",
        "42",
        "ip",
        "netns",
        "exec",
        "ns1",
        str(tmp_path / "braid-dp"),
        "echo",
    ]
