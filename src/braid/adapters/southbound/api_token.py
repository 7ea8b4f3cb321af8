"""The bearer token of `braid controller`'s API, read from a file on both ends.

A file, not a command-line argument: arguments are visible to every user
of the host (`ps`, /proc/PID/cmdline); a file can be kept to its owner.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TokenFileError", "read_token_file"]


class TokenFileError(ValueError):
    """The token file is missing, unreadable or empty."""


def read_token_file(path: str | Path) -> str:
    """The token in `path`: its text without surrounding whitespace (a trailing newline)."""
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(f"cannot read the API token file {path}: {exc}") from exc
    if not token or any(c.isspace() or not c.isprintable() for c in token):
        raise TokenFileError(f"the API token file {path} must hold one token: no spaces, not empty")
    return token
