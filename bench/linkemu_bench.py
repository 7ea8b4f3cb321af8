"""braid-dp's link emulator on veth pairs: throughput, small-frame rate, delay accuracy.

Three network namespaces (host a ─ veth ─ link ─ veth ─ host b); the link
namespace joins its two veth ends either with `braid-dp link` or, as the
baseline in the same run, with a Linux bridge. Figures:

- TCP throughput at MTU 9000 (iperf3, one stream), Gbit/s;
- 64-byte frames sent by `braid-dp blast` from host a at fixed rates and
  unpaced, counted on host b's interface: received frames/s and drops;
- the one-way delay error at 25 ms configured (a → b 25 ms, b → a 0): UDP
  round trips minus 25 ms minus the median round trip without delay; p50,
  p99 and max of its absolute value. The round trips come from `braid-dp
  probe` (kernel receive timestamps at both ends, the echo's turnaround
  taken out: no process's wake-up counts); `--probe python` uses the
  Python probe instead, whose own scheduling noise is larger. Measured
  twice: braid-dp sending at normal priority, then with `--realtime on`.

Issue floors: ≥ 2 Gbit/s at MTU 9000; ≥ 300 kpps at 64-byte frames with no
drops below that rate; delay error p99 ≤ 0.5 ms at 25 ms. Needs root,
iperf3 and ethtool, and braid-dp built (`make`). Run from the repository root:

    .venv/bin/python bench/linkemu_bench.py                # ~1.5 min
    .venv/bin/python bench/linkemu_bench.py --quick        # ~30 s
    .venv/bin/python bench/linkemu_bench.py --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from braid.adapters.dataplane import LinkEmulator, LinkSettings, find_braid_dp
from braid.adapters.dataplane.lab import HOST_B_IP, VethLab

FLOOR_GBPS = 2.0
FLOOR_KPPS = 300.0
FLOOR_DELAY_ERROR_P99_MS = 0.5
RTT_MODULE = "braid.adapters.dataplane.rtt"
ECHO_PORT = 9478


@contextlib.contextmanager
def forwarder(lab: VethLab, kind: str, realtime: bool = False) -> Iterator[LinkEmulator | None]:
    """Joins the link namespace's two ends with braid-dp or a bridge (the baseline)."""
    if kind == "bridge":
        lab.bridge()
        try:
            yield None
        finally:
            lab.unbridge()
        return
    a1, b1 = lab.interface("a1"), lab.interface("b1")
    with LinkEmulator(a1, b1, namespace=lab.link, realtime=realtime) as emulator:
        yield emulator


def tcp_gbps(lab: VethLab, seconds: float) -> float:
    server = subprocess.Popen(
        lab.exec_argv(lab.host_b, ["iperf3", "-s", "-1"]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        client = ["iperf3", "-c", HOST_B_IP, "-t", str(seconds), "-J"]
        out = subprocess.run(
            lab.exec_argv(lab.host_a, client), capture_output=True, text=True, check=True
        )
        received = json.loads(out.stdout)["end"]["sum_received"]["bits_per_second"]
        return float(received) / 1e9
    finally:
        server.kill()
        server.wait()


def blast(lab: VethLab, binary: Path, pps: int, seconds: float) -> dict[str, float]:
    """Sends 64-byte frames a → b at `pps` (0: unpaced); counts what host b's interface got."""
    destination = lab.mac(lab.host_b, lab.interface("b0"))
    before = lab.rx_packets(lab.host_b, lab.interface("b0"))
    argv = [str(binary), "blast", "--interface", lab.interface("a0"), "--dst-mac", destination]
    argv += ["--size", "64", "--pps", str(pps), "--seconds", str(seconds)]
    out = subprocess.run(
        lab.exec_argv(lab.host_a, argv), capture_output=True, text=True, check=True
    )
    time.sleep(0.3)  # let the last frames through the link
    report = json.loads(out.stdout)
    received = lab.rx_packets(lab.host_b, lab.interface("b0")) - before
    return {
        "offered_pps": pps,
        "sent_pps": report["sent"] / report["seconds"],
        "received_pps": received / report["seconds"],
        "drops": max(0, report["sent"] - received),
        "sent": report["sent"],
    }


def echo_argv(probe: str, binary: Path) -> list[str]:
    if probe == "python":
        return [sys.executable, "-m", RTT_MODULE, "echo", str(ECHO_PORT), "600"]
    return [str(binary), "probe", "echo", "--port", str(ECHO_PORT), "--seconds", "600"]


def probe_rtts(
    lab: VethLab, count: int, interval: float, probe: str = "braid-dp", binary: Path | None = None
) -> list[float]:
    if probe == "python":
        argv = [sys.executable, "-m", RTT_MODULE, "probe", HOST_B_IP, str(ECHO_PORT)]
        argv += [str(count), str(interval)]
    else:
        argv = [str(binary or find_braid_dp()), "probe", "send", "--to", f"{HOST_B_IP}:{ECHO_PORT}"]
        argv += ["--count", str(count), "--interval-ms", str(interval * 1e3)]
    out = subprocess.run(
        lab.exec_argv(lab.host_a, argv), capture_output=True, text=True, check=True
    )
    return [rtt for rtt in json.loads(out.stdout) if rtt is not None]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def delay_error(
    lab: VethLab, emulator: LinkEmulator, count: int, probe: str = "braid-dp"
) -> dict[str, float]:
    binary = find_braid_dp()
    echo = subprocess.Popen(lab.exec_argv(lab.host_b, echo_argv(probe, binary)))
    try:
        time.sleep(0.5)
        probe_rtts(lab, 5, 0.05, probe, binary)  # ARP and warm-up
        base_rtts = probe_rtts(lab, count, 0.005, probe, binary)
        base = statistics.median(base_rtts)
        emulator.set(LinkSettings(delay_ms=25), direction="a_to_b")
        probe_rtts(lab, 5, 0.05, probe, binary)
        rtts = probe_rtts(lab, count, 0.005, probe, binary)
    finally:
        echo.kill()
        echo.wait()
    errors = [abs(rtt - 25.0 - base) for rtt in rtts]
    # The probe's own noise (and the host's): the same measure without delay.
    noise = [abs(rtt - base) for rtt in base_rtts]
    return {
        "noise_p99_ms": percentile(noise, 0.99),
        "base_rtt_ms": base,
        "samples": len(rtts),
        "lost": count - len(rtts),
        "median_rtt_ms": statistics.median(rtts),
        "error_p50_ms": percentile(errors, 0.5),
        "error_p99_ms": percentile(errors, 0.99),
        "error_max_ms": max(errors),
    }


def throughput_section(args: argparse.Namespace, results: dict[str, Any]) -> None:
    with VethLab.fresh(mtu=9000) as lab:
        for kind in ("bridge", "braid-dp"):
            with forwarder(lab, kind) as emulator:
                gbps = tcp_gbps(lab, args.seconds)
                entry: dict[str, Any] = {"gbps": gbps}
                if emulator is not None:
                    entry["counters"] = dataclasses.asdict(emulator.counters()["a_to_b"])
                results["tcp_mtu9000"][kind] = entry
                print(f"  TCP at MTU 9000, {kind:8}: {gbps:6.2f} Gbit/s", flush=True)


def small_frames_section(args: argparse.Namespace, binary: Path, results: dict[str, Any]) -> None:
    with VethLab.fresh() as lab:
        for kind in ("bridge", "braid-dp"):
            rows = []
            with forwarder(lab, kind) as emulator:
                for pps in args.rates:
                    row = blast(lab, binary, pps, args.seconds)
                    if emulator is not None:
                        counters = emulator.counters()["a_to_b"]
                        row["emulator_socket_drops"] = counters.socket_drops
                    rows.append(row)
                    offered = f"{pps / 1e3:5.0f}k" if pps else "   max"
                    print(
                        f"  64-byte frames, {kind:8}, offered {offered}: sent "
                        f"{row['sent_pps'] / 1e3:6.1f} kpps, received "
                        f"{row['received_pps'] / 1e3:6.1f} kpps, drops {row['drops']:.0f}",
                        flush=True,
                    )
            results["frames_64"][kind] = rows


def delay_section(args: argparse.Namespace, results: dict[str, Any]) -> None:
    """The delay error with braid-dp's sender at normal priority, then real-time."""
    for realtime in (False, True):
        with VethLab.fresh() as lab, forwarder(lab, "braid-dp", realtime) as emulator:
            assert emulator is not None
            figures = delay_error(lab, emulator, args.probes, args.probe)
        key = "delay_25ms_realtime" if realtime else "delay_25ms"
        results[key] = {"probe": args.probe, "realtime": realtime, **figures}
        print(
            f"  delay 25 ms ({args.probe} probe, realtime {'on' if realtime else 'off'}): "
            f"base RTT {figures['base_rtt_ms']:.3f} ms; error p50 "
            f"{figures['error_p50_ms']:.3f} ms, p99 {figures['error_p99_ms']:.3f} ms, "
            f"max {figures['error_max_ms']:.3f} ms over {figures['samples']:.0f} probes; "
            f"the same without delay: p99 {figures['noise_p99_ms']:.3f} ms",
            flush=True,
        )


def verdict(results: dict[str, Any]) -> list[str]:
    """One line per floor, for the sections that ran."""
    lines = []
    if "braid-dp" in results["tcp_mtu9000"]:
        gbps = results["tcp_mtu9000"]["braid-dp"]["gbps"]
        word = "met" if gbps >= FLOOR_GBPS else "NOT met"
        lines.append(f"MTU 9000 ≥ {FLOOR_GBPS} Gbit/s: {gbps:.2f} → {word}")
    if "braid-dp" in results["frames_64"]:
        rows = results["frames_64"]["braid-dp"]
        best = max(row["received_pps"] for row in rows) / 1e3
        clean = [r for r in rows if r["offered_pps"] and r["offered_pps"] <= FLOOR_KPPS * 1e3]
        drops = sum(r["drops"] for r in clean)
        ok = best >= FLOOR_KPPS and drops == 0
        lines.append(
            f"64-byte ≥ {FLOOR_KPPS:.0f} kpps, 0 drops up to it: best {best:.0f} kpps, "
            f"{drops:.0f} drops at offered ≤ {FLOOR_KPPS:.0f}k → {'met' if ok else 'NOT met'}"
        )
    for key, how in (("delay_25ms", "normal"), ("delay_25ms_realtime", "realtime")):
        if key in results:
            p99 = results[key]["error_p99_ms"]
            word = "met" if p99 <= FLOOR_DELAY_ERROR_P99_MS else "NOT met"
            floor = f"delay error p99 ≤ {FLOOR_DELAY_ERROR_P99_MS} ms ({how} sender)"
            lines.append(f"{floor}: {p99:.3f} → {word}")
    return lines


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs, fewer rates")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument(
        "--probe",
        choices=("braid-dp", "python"),
        default="braid-dp",
        help="the delay probe: braid-dp's (kernel timestamps) or the Python one",
    )
    parser.add_argument(
        "--only",
        choices=("throughput", "frames", "delay"),
        action="append",
        help="run only these sections (repeatable)",
    )
    args = parser.parse_args(argv)
    args.seconds = 3.0 if args.quick else 8.0
    args.rates = [300_000, 0] if args.quick else [100_000, 200_000, 300_000, 400_000, 0]
    args.probes = 400 if args.quick else 2000
    if os.geteuid() != 0 or not shutil.which("iperf3"):
        print("needs root and iperf3 (apt-get install iperf3)", file=sys.stderr)
        return 2
    binary = find_braid_dp()
    results: dict[str, Any] = {"tcp_mtu9000": {}, "frames_64": {}, "cpus": os.cpu_count()}
    print(f"braid-dp link emulator ({binary}), {os.cpu_count()} CPUs", flush=True)
    sections = args.only or ["throughput", "frames", "delay"]
    if "throughput" in sections:
        throughput_section(args, results)
    if "frames" in sections:
        small_frames_section(args, binary, results)
    if "delay" in sections:
        delay_section(args, results)
    print("\n".join(["floors:", *("  " + line for line in verdict(results))]))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
