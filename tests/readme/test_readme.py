"""README.md's commands run as written, on a fresh directory, against the bundled examples.

The plain commands run, in order, in one shell (so `export BRAID_TOKEN=...`
carries over), from a directory where `src/` is the repository's. Servers
start in the background and are waited for; the next server stops the one
before. `ID` is the newest reservation's id. Commands that need root and
illustrations with `...` are checked for shape: the command exists and every
option they name is one it takes.

The block that starts the multi-domain service runs in a fresh directory of
its own, as a newcomer who starts there would run it. The bundled fig6a.yaml
is the repository's but for its agents' ports, which are free ones: the
file's fixed ports would collide with another run on the same host.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from braid.adapters.free_ports import free_port, free_ports
from tests.readme.readme_commands import Kind, ReadmeCommand, readme_commands, split_commands

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
BIN = Path(sys.executable).parent
NEWEST_ID = (
    "$(braid list --json | python -c "
    '\'import json, sys; print(json.load(sys.stdin)["reservations"][-1]["id"])\')'
)
PRELUDE = """\
set -uo pipefail
serve_pid=
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null' EXIT
wait_ready() {
    for _ in $(seq 300); do
        python -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \\
            "$BRAID_URL/healthz" 2>/dev/null && return 0
        kill -0 "$serve_pid" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}
"""


def _failed(command: ReadmeCommand, extra: str = "") -> str:
    message = shlex.quote(f"README.md line {command.line} failed: {command.text}")
    return f"{{ echo {message} >&2; {extra} exit 1; }}"


def _shell_step(command: ReadmeCommand) -> str:
    announce = f"echo {shlex.quote(f'$ {command.text}')}"
    if command.kind is Kind.SERVER:
        log = f"serve-{command.line}.log"
        return "\n".join(
            [
                announce,
                'if [ -n "$serve_pid" ]; then kill "$serve_pid"; wait "$serve_pid"; fi',
                f"{command.text} > {log} 2>&1 & serve_pid=$!",
                f"wait_ready || {_failed(command, f'cat {log} >&2;')}",
            ]
        )
    text = command.text.replace("ID", '"$ID"') if _only_id_missing(command) else command.text
    setup = f"ID={NEWEST_ID}\n" if text != command.text else ""
    return f"{announce}\n{setup}{text} || {_failed(command)}"


def _only_id_missing(command: ReadmeCommand) -> bool:
    elided = "..." in command.text or "…" in command.text
    return command.kind is Kind.PLACEHOLDER and not elided


def _runnable(command: ReadmeCommand) -> bool:
    return command.kind in (Kind.RUN, Kind.SERVER) or _only_id_missing(command)


FRESH_DIRECTORY = "braid serve --domains"  # the block with it runs in a directory of its own
AGENT_PORT = re.compile(r'(agent: "127\.0\.0\.1:)(\d+)(")')


def _script(commands: list[ReadmeCommand]) -> str:
    fresh = {c.block for c in commands if c.text.startswith(FRESH_DIRECTORY)}
    steps = []
    for block in sorted({c.block for c in commands}):
        runnable = [_shell_step(c) for c in commands if c.block == block and _runnable(c)]
        if block in fresh:
            where = f"fresh-{block}"
            runnable = [f"mkdir {where} && ln -s ../src {where}/src && cd {where}", *runnable]
            runnable.append("cd ..")
        steps += runnable
    return PRELUDE + "\n".join(steps) + "\n"


def _sources(into: Path) -> None:
    """`into/src` as the repository's `src`, but fig6a.yaml's agents on free ports."""
    src, examples = REPO / "src", REPO / "src" / "braid" / "examples"
    (into / "src" / "braid" / "examples").mkdir(parents=True)
    for entry in [*src.iterdir(), *(src / "braid").iterdir(), *examples.iterdir()]:
        if entry not in (src / "braid", examples, examples / "fig6a.yaml"):
            (into / entry.relative_to(REPO)).symlink_to(entry)
    text = (examples / "fig6a.yaml").read_text()
    ports = iter(free_ports(len(AGENT_PORT.findall(text))))
    moved = AGENT_PORT.sub(lambda m: f"{m[1]}{next(ports)}{m[3]}", text)
    (into / "src" / "braid" / "examples" / "fig6a.yaml").write_text(moved)


def _environment(port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAID_")}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        BRAID_PORT=str(port),
        BRAID_URL=f"http://127.0.0.1:{port}",
        COLUMNS="160",
    )
    return env


def test_the_readme_has_commands_of_every_kind() -> None:
    kinds = {c.kind for c in readme_commands(README)}
    assert {Kind.MAKE, Kind.RUN, Kind.SERVER, Kind.PLACEHOLDER} <= kinds


def test_commands_split_at_semicolons_but_loops_stay_whole() -> None:
    assert split_commands("braid list; braid show ID") == ["braid list", "braid show ID"]
    loop = "for d in a b; do braid agent -d $d & done"
    assert split_commands(loop) == [loop]


def _command_path(words: list[str]) -> list[str]:
    path = []
    for word in words[1:]:
        if word.startswith("-") or not word.replace("-", "").isalnum() or word == "ID":
            break
        path.append(word)
    return path


def _shape_checked() -> list[ReadmeCommand]:
    return [
        c
        for c in readme_commands(README)
        if c.kind is Kind.ROOT or (c.kind is Kind.PLACEHOLDER and not _only_id_missing(c))
    ]


@pytest.mark.parametrize("command", _shape_checked(), ids=lambda c: f"line{c.line}")
def test_illustrations_name_real_commands_and_options(command: ReadmeCommand) -> None:
    words = command.words()
    assert words[0] == "braid", f"README line {command.line}: not a braid command"
    path = _command_path(words)
    shown = subprocess.run(
        [str(BIN / "braid"), *path, "--help"],
        capture_output=True,
        text=True,
        env=_environment(free_port()),
        timeout=60,
    )
    assert shown.returncode == 0, f"README line {command.line}: {shown.stderr}"
    for option in (w.split("=")[0] for w in words if w.startswith("--")):
        assert option in shown.stdout, f"README line {command.line}: no option {option}"


def test_the_multidomain_block_runs_in_a_fresh_directory() -> None:
    commands = readme_commands(README)
    script = _script(commands)
    serve = next(c for c in commands if c.text.startswith(FRESH_DIRECTORY))
    assert script.index("cd fresh-") < script.index("braid topology split")
    assert script.index("braid topology split") < script.index(serve.text)
    assert script.index(serve.text) < script.index("cd ..")


def _virtualenv(into: Path) -> None:
    """`into/.venv` as `make` leaves it: this interpreter's environment, or (when the
    tests do not run in one) a stand-in whose `activate` puts this braid on PATH."""
    if (BIN / "activate").is_file():
        (into / ".venv").symlink_to(BIN.parent)
    else:
        (into / ".venv" / "bin").mkdir(parents=True)
        (into / ".venv" / "bin" / "activate").write_text(f'PATH="{BIN}:$PATH"\n')


def test_the_readme_activates_the_virtualenv_before_its_first_braid_command() -> None:
    commands = [c for c in readme_commands(README) if c.kind is not Kind.MAKE]
    assert commands[0].text == ". .venv/bin/activate"
    assert commands[1].text.startswith("braid ")


def test_the_readme_runs_as_written(tmp_path: Path) -> None:
    _sources(tmp_path)
    _virtualenv(tmp_path)
    script = tmp_path / "readme.sh"
    script.write_text(_script(readme_commands(README)))
    env = _environment(free_port())
    env["PATH"] = os.environ.get("PATH", "")  # braid on it only as the README puts it there
    ran = subprocess.run(
        ["bash", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert ran.returncode == 0, f"{ran.stderr[-4000:]}\n--- stdout ---\n{ran.stdout[-4000:]}"
