"""Errors raised by the core; each names the input field it is about."""

from __future__ import annotations


class BraidError(Exception):
    """Base class of every error braid raises on purpose."""


class InputError(BraidError, ValueError):
    """Bad input: names the offending field so the user knows what to fix."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


class TopologyError(InputError):
    """A topology that cannot be used as given."""
