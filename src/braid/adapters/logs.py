"""braid's own log lines: plain text for a terminal, or JSON lines for a log collector.

Every line made while a REST request is served names its request id (the
one the response's `X-Request-ID` and the audit log carry).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Final

from braid.app.request_context import current_request

__all__ = ["FORMATS", "JsonFormatter", "configure_logging"]

FORMATS: Final = ("text", "json")
_TEXT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s%(request)s"


class _RequestFilter(logging.Filter):
    """Adds the current request id to each record (as `request_id` and as text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        found = current_request()
        record.request_id = found
        record.request = f" [request {found}]" if found else ""
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request_id, exception."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            line["request_id"] = request_id
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(style: str = "text", level: int = logging.WARNING) -> None:
    """braid's loggers write to stderr in `style` ("text" or "json")."""
    if style not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}, not {style!r}")
    handler = logging.StreamHandler()
    handler.addFilter(_RequestFilter())
    handler.setFormatter(JsonFormatter() if style == "json" else logging.Formatter(_TEXT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
