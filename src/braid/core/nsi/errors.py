"""NSI's error codes (GFD.235's table) and the error that carries one."""

from __future__ import annotations

from typing import Final

from braid.core.errors import BraidError

__all__ = [
    "CAPACITY_UNAVAILABLE",
    "CONNECTION_NONEXISTENT",
    "INTERNAL_ERROR",
    "INVALID_TRANSITION",
    "MISSING_PARAMETER",
    "NOT_IMPLEMENTED",
    "NO_PATH_FOUND",
    "PAYLOAD_ERROR",
    "STP_UNAVAILABLE",
    "TOPOLOGY_ERROR",
    "UNAUTHORIZED",
    "UNKNOWN_STP",
    "UNSUPPORTED_PARAMETER",
    "NsiError",
]

PAYLOAD_ERROR: Final = "00100"
MISSING_PARAMETER: Final = "00101"
UNSUPPORTED_PARAMETER: Final = "00102"
NOT_IMPLEMENTED: Final = "00103"
INVALID_TRANSITION: Final = "00201"
CONNECTION_NONEXISTENT: Final = "00203"
UNAUTHORIZED: Final = "00302"
TOPOLOGY_ERROR: Final = "00400"
NO_PATH_FOUND: Final = "00403"
INTERNAL_ERROR: Final = "00500"
UNKNOWN_STP: Final = "00701"
STP_UNAVAILABLE: Final = "00704"
CAPACITY_UNAVAILABLE: Final = "00705"


class NsiError(BraidError):
    """A request NSI says how to refuse: `code` is its errorId, `field` the element at fault."""

    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.code = code
        self.field = field
        self.message = message
