"""The command lines of README.md, as a new user would type them.

A line is taken from the README's ``sh`` blocks with its continuations joined
and its trailing comment dropped, then split at ``;`` into commands (a shell
loop stays whole). Each command is classified: the README's two ``make``
commands (CI runs them itself), commands that need root (``sudo``),
illustrations with a placeholder (``...``, ``ID``), long-running servers, and
plain commands that must run as written.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

__all__ = ["Kind", "ReadmeCommand", "readme_commands", "split_commands"]

FENCE = re.compile(r"^```(\w*)\s*$")
SERVERS = ("braid serve",)
PLACEHOLDER = re.compile(r"(\.\.\.|…|\bID\b)")
LOOP_WORDS = ("for ", "while ", "if ")


class Kind(Enum):
    MAKE = "make"
    ROOT = "needs root"
    PLACEHOLDER = "illustration"
    SERVER = "server"
    RUN = "run"


@dataclass(frozen=True)
class ReadmeCommand:
    line: int
    text: str
    block: int = 0  # which `sh` block of the README, counted from 0

    @property
    def kind(self) -> Kind:
        if self.text.startswith("make "):
            return Kind.MAKE
        if self.text.startswith("sudo "):
            return Kind.ROOT
        if PLACEHOLDER.search(self.text):
            return Kind.PLACEHOLDER
        if self.text.startswith(SERVERS):
            return Kind.SERVER
        return Kind.RUN

    def words(self) -> list[str]:
        """The command's words, without `sudo` and without redirections."""
        words = shlex.split(self.text.replace("…", "..."), comments=True)
        if words and words[0] == "sudo":
            words = words[1:]
        return [w for w in words if not w.startswith((">", "2>", "<"))]


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a `#` inside quotes or a word is kept)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def split_commands(line: str) -> list[str]:
    """`a; b` is two commands; a shell loop or a `$(...)` stays whole."""
    if line.startswith(LOOP_WORDS) or "$(" in line:
        return [line]
    return [part.strip() for part in line.split(";") if part.strip()]


def _logical_lines(block: list[tuple[int, str]]) -> list[tuple[int, str]]:
    joined: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in block:
        text = raw.strip()
        if pending is not None:
            number, text = pending[0], pending[1] + " " + text
            pending = None
        if text.endswith("\\"):
            pending = (number, text[:-1].rstrip())
            continue
        joined.append((number, text))
    return joined


def _sh_blocks(readme: Path) -> list[list[tuple[int, str]]]:
    blocks: list[list[tuple[int, str]]] = []
    inside, shell = False, False
    for number, raw in enumerate(readme.read_text().splitlines(), start=1):
        fence = FENCE.match(raw.strip())
        if fence and not inside:
            inside, shell = True, fence.group(1) in ("sh", "bash", "shell")
            blocks.append([])
        elif fence:
            inside = False
        elif inside and shell:
            blocks[-1].append((number, raw))
    return [b for b in blocks if b]


def readme_commands(readme: Path) -> list[ReadmeCommand]:
    commands = []
    for index, block in enumerate(_sh_blocks(readme)):
        for number, text in _logical_lines(block):
            for command in split_commands(_strip_comment(text)):
                commands.append(ReadmeCommand(number, command, index))
    return commands
