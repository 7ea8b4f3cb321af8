"""Each step of the NSI cycle at braid, and the same cycle at OpenNSA itself, in one run.

braid serves NSI (`braid serve --nsi-domain braid.test`, SQLite) and a real,
unmodified OpenNSA (its "dud" backend, PostgreSQL) runs beside it, both on
loopback, started by this bench (the peer is `../shared/peers/opennsa/run-opennsa`
from the repository's root). Two measurements, both against both providers:

1. *Step latency*: a requester in this process sends each request of the
   cycle (reserve, querySummarySync, reserveCommit, provision, release,
   terminate) and times it until its confirmation arrives at its replyTo
   (querySummarySync: until the synchronous answer). One cycle at a time,
   each in its own hour so VLANs never clash.
2. *onsa*: OpenNSA's own requester CLI runs the same cycle; each step is
   timed as onsa runs it, its Python start-up (about a second) included.

    .venv/bin/python bench/nsi_bench.py [--cycles 30] [--onsa-cycles 3]

Floor (issue 17): every step at braid answers in <= 100 ms median on loopback.
The ratio column is braid / OpenNSA (below 1: braid is faster). The exit status
is 1 if a step failed or a connection was left held or active.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from lxml import etree

from braid.adapters.free_ports import free_port
from braid.adapters.nsi.safe_xml import parse_xml
from braid.testing.nsi_requests import request
from braid.testing.opennsa import (
    Onsa,
    braid_with_nsi,
    opennsa_peer,
    peer_script,
)

ROOT = Path(__file__).resolve().parents[1]
BRAID = Path(sys.executable).parent / "braid"
FLOOR_MS = 100.0
STEPS = ("reserve", "querySummarySync", "reserveCommit", "provision", "release", "terminate")
ONSA_STEPS = ("reserveonly", "query", "reservecommit", "provision", "release", "terminate")
REQUESTER = "urn:ogf:network:bench.test:nsa"
TOPOLOGY = """\
nodes: [{id: p1}, {id: p2}, {id: p3}]
links:
  - {id: p1-p2, a: p1, b: p2, capacity: 1G, latency_ms: 1, vlans: 1780-1789}
  - {id: p2-p3, a: p2, b: p3, capacity: 1G, latency_ms: 1, vlans: 1780-1789}
"""
HEADERS = "{http://schemas.ogf.org/nsi/2013/12/framework/headers}nsiHeader"


@dataclass
class Inbox:
    """Confirmations received at the replyTo, by correlation id."""

    arrived: dict[str, tuple[float, str]] = field(default_factory=dict)
    ready: threading.Condition = field(default_factory=threading.Condition)

    def wait(self, correlation: str, timeout: float = 30) -> tuple[float, str]:
        with self.ready:
            if not self.ready.wait_for(lambda: correlation in self.arrived, timeout):
                raise TimeoutError(f"no confirmation for {correlation}")
            return self.arrived.pop(correlation)


@contextmanager
def reply_server(inbox: Inbox) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            at = time.perf_counter()
            root = parse_xml(body)
            correlation = root.findtext(f".//{HEADERS}/correlationId") or ""
            operation = etree.QName(root[-1][0]).localname
            with inbox.ready:
                inbox.arrived[correlation] = (at, operation)
                inbox.ready.notify_all()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/NSI/services/RequesterService2"
    finally:
        server.shutdown()


@dataclass(frozen=True)
class Provider:
    name: str
    url: str
    domain: str
    source: str
    dest: str


def one_cycle(
    client: httpx.Client, provider: Provider, inbox: Inbox, reply_to: str, hour: int
) -> dict[str, float]:
    """Milliseconds per step of one cycle; raises if a step is refused."""
    times: dict[str, float] = {}
    connection: str | None = None
    start = f"2031-01-{1 + hour // 24:02d}T{hour % 24:02d}:00:00Z"
    end = f"2031-01-{1 + hour // 24:02d}T{hour % 24:02d}:30:00Z"
    for step in STEPS:
        correlation = f"urn:uuid:{uuid.uuid4()}"
        body = request(
            step,
            connection_id=connection,
            source=provider.source,
            dest=provider.dest,
            start=start,
            end=end,
            domain=provider.domain,
            requester=REQUESTER,
            reply_to=reply_to,
            correlation_id=correlation,
        )
        action = f'"http://schemas.ogf.org/nsi/2013/12/connection/service/{step}"'
        began = time.perf_counter()
        answer = client.post(provider.url, content=body, headers={"SOAPAction": action})
        if answer.status_code != 200:
            raise RuntimeError(f"{provider.name} {step}: HTTP {answer.status_code}: {answer.text}")
        if step == "querySummarySync":
            times[step] = (time.perf_counter() - began) * 1000
            continue
        if step == "reserve":
            connection = parse_xml(answer.content).findtext(".//connectionId")
        at, operation = inbox.wait(correlation)
        if not operation.endswith("Confirmed"):
            raise RuntimeError(f"{provider.name} {step}: answered {operation}")
        times[step] = (at - began) * 1000
    return times


def protocol_figures(providers: list[Provider], cycles: int) -> dict[str, dict[str, list[float]]]:
    figures: dict[str, dict[str, list[float]]] = {p.name: {s: [] for s in STEPS} for p in providers}
    inbox = Inbox()
    with reply_server(inbox) as reply_to, httpx.Client(timeout=30) as client:
        for cycle in range(cycles + 1):
            for provider in providers:  # interleaved: both see the same machine load
                times = one_cycle(client, provider, inbox, reply_to, cycle)
                if cycle == 0:
                    continue  # warm-up
                for step, ms in times.items():
                    figures[provider.name][step].append(ms)
    return figures


def onsa_figures(
    onsas: dict[str, Onsa], stps: dict[str, tuple[str, str]], cycles: int
) -> dict[str, dict[str, list[float]]]:
    figures: dict[str, dict[str, list[float]]] = {n: {s: [] for s in ONSA_STEPS} for n in onsas}
    for cycle in range(cycles):
        for name, onsa in onsas.items():
            source, dest = stps[name]
            start, end = f"2032-01-01T{cycle:02d}:00:00", f"2032-01-01T{cycle:02d}:30:00"
            reserved = onsa.reserve(source, dest, 100, start, end)
            figures[name]["reserveonly"].append(reserved.seconds * 1000)
            connection = reserved.connection_id
            for step in ONSA_STEPS[1:]:
                done = onsa.step(step, connection)
                if "Error" in done.output:
                    raise RuntimeError(f"onsa {step} at {name}: {done.output}")
                figures[name][step].append(done.seconds * 1000)
    return figures


def report(
    title: str, figures: dict[str, dict[str, list[float]]], steps: tuple[str, ...], floor: bool
) -> bool:
    print(f"\n{title}")
    head = f"{'step':<18} {'braid median':>13} {'p90':>8} {'OpenNSA median':>15} {'p90':>8}"
    print(head + f" {'ratio':>6}" + ("  floor" if floor else ""))
    ok = True
    for step in steps:
        b, o = figures["braid"][step], figures["OpenNSA"][step]
        bm, om = statistics.median(b), statistics.median(o)
        line = f"{step:<18} {bm:>10.1f} ms {_p90(b):>5.1f} ms {om:>12.1f} ms {_p90(o):>5.1f} ms"
        line += f" {bm / om:>6.2f}"
        if floor:
            met = bm <= FLOOR_MS
            ok &= met
            line += "  " + ("met" if met else f"NOT MET (> {FLOOR_MS:g} ms)")
        print(line)
    return ok


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=30, help="timed cycles per provider")
    parser.add_argument("--onsa-cycles", type=int, default=3, help="cycles run with onsa")
    args = parser.parse_args()
    script = peer_script(ROOT)
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        topology = workdir / "topology.yaml"
        topology.write_text(TOPOLOGY, encoding="utf-8")
        (workdir / "peer").mkdir()
        with (
            braid_with_nsi(BRAID, topology, workdir) as braid,
            opennsa_peer(script, workdir / "peer", "peer.test") as peer_url,
        ):
            providers = [
                Provider("braid", braid.provider, "braid.test", "p1?vlan=1780", "p3?vlan=1781"),
                Provider("OpenNSA", peer_url, "peer.test", "p1?vlan=1780", "p2?vlan=1781"),
            ]
            print(f"braid at {braid.provider}, OpenNSA at {peer_url}; {args.cycles} cycles each")
            protocol = protocol_figures(providers, args.cycles)
            onsas = {
                "braid": Onsa(script, braid.provider, "braid.test:nsa", free_port()),
                "OpenNSA": Onsa(script, peer_url, "peer.test:nsa", free_port()),
            }
            stps = {
                "braid": ("braid.test:topology:p1?vlan=1782", "braid.test:topology:p3?vlan=1782"),
                "OpenNSA": ("peer.test:topology:p1?vlan=1782", "peer.test:topology:p2?vlan=1782"),
            }
            by_onsa = onsa_figures(onsas, stps, args.onsa_cycles)
            live = {name: onsa.run("query").live() for name, onsa in onsas.items()}
    ok = report(
        "Step latency (request -> confirmation at replyTo), loopback", protocol, STEPS, True
    )
    report(
        f"onsa, {args.onsa_cycles} cycles (each step includes onsa's start-up)",
        by_onsa,
        ONSA_STEPS,
        False,
    )
    for name, states in live.items():
        print(f"{name}: connections left held or active after terminate: {len(states)}")
        ok &= not states
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
