"""`LinkEmulator`: one `braid-dp link` process between two interfaces, driven over its socket."""

from __future__ import annotations

from pathlib import Path

from braid.adapters.dataplane.element import BraidDpElement, ElementError
from braid.adapters.dataplane.protocol import (
    Direction,
    DirectionCounters,
    LinkSettings,
    encode_request,
    encode_set,
    parse_counters,
)

__all__ = ["LinkEmulator", "LinkEmulatorError"]


class LinkEmulatorError(ElementError):
    """braid-dp did not start, died, or its control socket broke."""


class LinkEmulator(BraidDpElement):
    """Forwards between interfaces `a` and `b` (in `namespace`, if given) with the settings.

    With `vlan`, only that VLAN's frames are carried: one emulator per VLAN
    on the same two interfaces gives paths of different delay over one wire.
    With `realtime`, frames are sent from real-time threads (on time on a busy host).
    Use as a context manager, or call `start()` and `stop()`.
    """

    error = LinkEmulatorError

    def __init__(
        self,
        a: str,
        b: str,
        *,
        namespace: str | None = None,
        settings: LinkSettings | None = None,
        binary: Path | None = None,
        seed: int = 1,
        vlan: int | None = None,
        realtime: bool = False,
    ) -> None:
        super().__init__(namespace=namespace, binary=binary)
        self.a, self.b = a, b
        self._settings = settings
        self._seed = seed
        self.vlan = vlan
        self.realtime = realtime

    def element_argv(self, binary: Path) -> list[str]:
        command = [str(binary), "link", "--a", self.a, "--b", self.b]
        command += ["--control", str(self.control_path), "--seed", str(self._seed)]
        if self.vlan is not None:
            command += ["--vlan", str(self.vlan)]
        return [*command, "--realtime", "on"] if self.realtime else command

    def after_start(self) -> None:
        if self._settings is not None and self._settings.as_fields():
            self.set(self._settings)

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
