"""The monitor's event log: one JSON object a line, each with its wall-clock time `t`.

Kinds: `start`, `probe` (rtt_ms, null when lost), `rate` (bps), `detect`
(reason, value), `action` (to, ok, done, error), `recovered`, `target-lost`,
`target-back`, `stop`. Each line is flushed as it is written, so a monitor
killed mid-run leaves a readable log.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, TextIO

__all__ = ["EventLog"]


class EventLog:
    def __init__(self, path: Path | None, probes: bool = True) -> None:
        self._file: TextIO | None = None if path is None else path.open("a", encoding="utf-8")
        self._probes = probes
        self._lock = threading.Lock()

    def write(self, t: float, kind: str, **fields: Any) -> None:
        if self._file is None or (kind in ("probe", "rate") and not self._probes):
            return
        line = json.dumps({"t": round(t, 6), "kind": kind, **fields}, separators=(",", ":"))
        with self._lock:
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
