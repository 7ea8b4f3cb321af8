"""What `braid emulate` needs on the host, and what to install when it is missing."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from typing import Final

APT_PACKAGES: Final = "openvswitch-switch mininet iperf3 ethtool iproute2"


@dataclass(frozen=True, slots=True)
class Missing:
    """One unmet prerequisite and how to meet it."""

    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.what} — {self.fix}"


@dataclass(frozen=True, slots=True)
class QdiscSupport:
    """Which traffic-control disciplines the running kernel offers."""

    htb: bool
    tbf: bool
    netem: bool


_TOOLS: Final = {
    "ovs-vsctl": "apt-get install openvswitch-switch",
    "ovs-vswitchd": "apt-get install openvswitch-switch",
    "ovs-ofctl": "apt-get install openvswitch-switch",
    "ovsdb-server": "apt-get install openvswitch-switch",
    "mnexec": "apt-get install mininet (Mininet's namespace helper)",
    "iperf3": "apt-get install iperf3",
    "ethtool": "apt-get install ethtool",
    "tc": "apt-get install iproute2",
    "ip": "apt-get install iproute2",
}


def missing_prerequisites(*, need_root: bool = True) -> list[Missing]:
    """Every unmet prerequisite (empty when the host can run emulations)."""
    found: list[Missing] = []
    if need_root and os.geteuid() != 0:
        found.append(Missing("root", "run as root (Mininet creates namespaces and veths)"))
    for tool, fix in _TOOLS.items():
        if shutil.which(tool) is None:
            found.append(Missing(f"{tool} not on PATH", fix))
    if importlib.util.find_spec("mininet") is None:
        found.append(
            Missing(
                "Python package 'mininet' not importable from this interpreter",
                "pip install 'braid[emulate]' into braid's virtualenv; apt-get install mininet",
            )
        )
    if importlib.util.find_spec("matplotlib") is None:
        found.append(
            Missing(
                "Python package 'matplotlib' not importable (the experiments' figures)",
                "pip install 'braid[emulate]' (or 'braid[plot]')",
            )
        )
    found.extend(_braid_dp_problems())
    if shutil.which("tc") and shutil.which("ip"):
        found.extend(_qdisc_problems(need_root=need_root))
    return found


def _braid_dp_problems() -> list[Missing]:
    """Links get their latency from braid's link emulator (the kernel may lack netem)."""
    from braid.adapters.dataplane.binary import BraidDpMissingError, find_braid_dp

    try:
        find_braid_dp()
    except BraidDpMissingError as exc:
        fix = "cargo build --release --locked in dataplane/ (or set $BRAID_DP to the binary)"
        return [Missing(f"braid-dp (the link emulator, for links' latency): {exc}", fix)]
    return []


def _qdisc_problems(*, need_root: bool) -> list[Missing]:
    if need_root and os.geteuid() != 0:
        return []
    support = qdisc_support()
    problems = []
    if not support.htb:
        problems.append(Missing("kernel qdisc 'htb'", "a kernel with sch_htb (rate limits)"))
    return problems


def qdisc_support() -> QdiscSupport:
    """Probe htb, tbf and netem in a throw-away namespace, so the host is untouched."""
    namespace = f"braid-probe-{uuid.uuid4().hex[:8]}"
    if _run(["ip", "netns", "add", namespace]) != 0:
        return QdiscSupport(htb=False, tbf=False, netem=False)
    try:
        _run(["ip", "-n", namespace, "link", "set", "lo", "up"])
        return QdiscSupport(
            htb=_qdisc_works(namespace, ["htb", "default", "1"]),
            tbf=_qdisc_works(namespace, ["tbf", "rate", "1mbit", "burst", "10k", "latency", "1s"]),
            netem=_qdisc_works(namespace, ["netem", "delay", "1ms"]),
        )
    finally:
        _run(["ip", "netns", "delete", namespace])


def _qdisc_works(namespace: str, spec: list[str]) -> bool:
    added = _run(["tc", "-n", namespace, "qdisc", "add", "dev", "lo", "root", *spec]) == 0
    if added:
        _run(["tc", "-n", namespace, "qdisc", "del", "dev", "lo", "root"])
    return added


def netem_note(support: QdiscSupport) -> str | None:
    """What an experiment with delay or loss must tell the user when netem is absent."""
    if support.netem:
        return None
    return (
        "this kernel has no 'netem' qdisc: links' latency comes from braid's own link "
        "emulator (braid-dp link), not from netem"
    )


def _run(argv: list[str]) -> int:
    done = subprocess.run(argv, capture_output=True, check=False, timeout=30)
    return done.returncode
