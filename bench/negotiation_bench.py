"""Multi-domain negotiation over real gRPC: latency, throughput, and the ledgers afterwards.

The orchestrator and four domain agents (two sites, two visible WANs) run as
separate processes on loopback, each on one CPU (`LocalCluster`). Every
reservation takes two domain paths, so all four agents take part in every
round: offers with the Preps of the guessed split, then Commit (two rounds;
three, offers first, on a route's first reservation or with --no-speculate).

    .venv/bin/python bench/negotiation_bench.py            # ~1.5 min
    .venv/bin/python bench/negotiation_bench.py --quick

Printed: the load average (the machine may be shared), the median and 99th
percentile end-to-end negotiation (one client) beside baselines measured in the
same run (one bare gRPC round trip to one agent; the protocol's rounds of empty
unary calls to every agent taking part, each round in parallel; the same rounds
of the smallest real message through the orchestrator's own agent pool and
streams; one store write) and the least a negotiation can cost here, which they
add up to (a round trip, the rounds, three writes one after another), one
client's median again against an
orchestrator run with `--compare-with` (default `--no-speculate`: three rounds,
offers before any Prep; the two clusters' reservations take turns, so both see
the same load), the
throughput with concurrent clients beside a cluster without batching
(`--no-batch`: one gRPC call per message; the two clusters' bursts take turns),
CPU per reservation of each process and the rate both CPUs would reach at it
busy all the time; then the ledger check (nothing leaked,
nothing overbooked).
    .venv/bin/python bench/negotiation_bench.py --network fig6a   # six agents per reservation

Floors (issue 12): median <= 6 ms (4 agents) or <= 10 ms (Fig. 6a, 6 agents taking
part), >= 200 reservations/s with 8 clients.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from braid.adapters.rpc.agent_client import GrpcAgentPool
from braid.adapters.rpc.ledgers import check_ledgers, committed_of
from braid.adapters.rpc.v1 import negotiation_pb2 as pb
from braid.app.agent.messages import OffersCall
from braid.bootstrap.local_cluster import LocalCluster
from revisions import baseline_source

# Floors (issue 12): median <= 6 ms on the 4-agent network, <= 10 ms on Fig. 6a; both
# >= 200 reservations/s with 8 clients.
FLOOR_MEDIAN_MS = {"four": 6.0, "fig6a": 10.0}
FLOOR_PER_SECOND = 200.0
# Written one after another on the answer's path: a domain's yes vote (forced before it
# answers), the decision (durable before anyone hears it), a domain's commit.
STORE_WRITES = 3
MBIT = 10**6

NETWORK = {
    "domains": [
        {"id": "site-a", "kind": "site", "agent": "127.0.0.1:1"},
        {"id": "wan-1", "kind": "wan", "agent": "127.0.0.1:2"},
        {"id": "wan-2", "kind": "wan", "agent": "127.0.0.1:3"},
        {"id": "site-b", "kind": "site", "agent": "127.0.0.1:4"},
    ],
    "nodes": [
        {"id": n, "domain": d}
        for n, d in [
            ("a-host", "site-a"), ("a-edge", "site-a"), ("w1-x", "wan-1"), ("w1-y", "wan-1"),
            ("w2-x", "wan-2"), ("w2-y", "wan-2"), ("b-edge", "site-b"), ("b-host", "site-b"),
        ]
    ],
    "links": [
        {"id": "a-lan", "a": "a-host", "b": "a-edge", "capacity": "400G"},
        {"id": "b-lan", "a": "b-edge", "b": "b-host", "capacity": "400G"},
        {"id": "a-w1", "a": "a-edge", "b": "w1-x", "capacity": "400G", "vlans": "2-4094"},
        {"id": "a-w2", "a": "a-edge", "b": "w2-x", "capacity": "400G", "vlans": "2-4094"},
        {"id": "w1-b", "a": "w1-y", "b": "b-edge", "capacity": "400G", "vlans": "2-4094"},
        {"id": "w2-b", "a": "w2-y", "b": "b-edge", "capacity": "400G", "vlans": "2-4094"},
        {"id": "w1-core", "a": "w1-x", "b": "w1-y", "capacity": "100G"},
        {"id": "w2-core", "a": "w2-x", "b": "w2-y", "capacity": "100G"},
    ],
}  # fmt: skip


FIG6A = Path(__file__).resolve().parents[1] / "src" / "braid" / "examples" / "fig6a.yaml"
# The two networks: the 4-agent one above, and the paper's Fig. 6a (nine agents; site A
# to site C goes over both WANs, so six agents take part in each reservation).
ENDS = {
    "four": (("site-a", "a-host"), ("site-b", "b-host")),
    "fig6a": (("site-a", "a-dtn"), ("site-c", "c-dtn")),
}
ends = ENDS["four"]


def reservation(rid: str, index: int, base: int) -> pb.Reservation:
    # Staggered one-hour windows over a month: bookings overlap a little, as in service.
    start = base + 600 + (index * 3600) % (30 * 86400)
    (src, src_point), (dst, dst_point) = ends
    return pb.Reservation(
        id=rid,
        source=pb.Endpoint(domain=src, point=src_point),
        destination=pb.Endpoint(domain=dst, point=dst_point),
        bandwidth_bps=200 * MBIT,
        window=pb.Window(start=start, end=start + 3600),
        strategy=pb.STRATEGY_PARTIAL_OFFERS,
        max_paths=2,
    )


def bare_round_trips_ms(cluster: LocalCluster, count: int) -> float:
    """Median of one Describe call to one agent (transport + servicer only)."""
    stub = cluster.agent(ends[0][0])
    query = pb.DescribeQuery()
    samples = []
    for _ in range(count):
        began = time.perf_counter()
        stub.Describe(query, timeout=5)
        samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def store_write_ms(folder: Path, count: int, sync: str) -> float:
    """Median of one SQLite write (WAL, `sync` as the stores have it) of a row the size of
    a decision with its result, on the disk the cluster's stores are on."""
    db = sqlite3.connect(str(folder / "store-write.db"), isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={sync}")
        db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
        samples = []
        for i in range(count):
            began = time.perf_counter()
            db.execute("INSERT INTO t VALUES (?, ?)", (i, "x" * 2048))
            samples.append((time.perf_counter() - began) * 1000)
    finally:
        db.close()
    return statistics.median(samples)


def fan_out_rounds_ms(cluster: LocalCluster, domains: list[str], count: int, rounds: int) -> float:
    """Median of `rounds` rounds of empty calls to every agent taking part, each round's calls
    in parallel from a thread pool as the orchestrator makes them: the protocol's floor
    in transport alone (what every negotiation pays before any agent does any work)."""
    stubs = [cluster.agent(d) for d in domains]
    query = pb.DescribeQuery()
    samples = []
    with ThreadPoolExecutor(max_workers=16) as pool:
        for _ in range(count):
            began = time.perf_counter()
            for _ in range(rounds):
                calls = [pool.submit(stub.Describe, query, timeout=5) for stub in stubs]
                for call in calls:
                    call.result()
            samples.append((time.perf_counter() - began) * 1000)
    return statistics.median(samples)


def stream_rounds_ms(cluster: LocalCluster, domains: list[str], count: int, rounds: int) -> float:
    """Median of `rounds` rounds of the smallest real message (an offers request with no
    span: checked, answered, nothing stored) to every agent taking part, through the
    orchestrator's own agent pool and streams: the transport floor of the default path."""
    pool = GrpcAgentPool({d: f"127.0.0.1:{cluster.ports[d]}" for d in domains})
    now = int(time.time())
    window = (now + 600, now + 4200)
    samples = []
    try:
        for i in range(count):
            began = time.perf_counter()
            for _ in range(rounds):
                calls = [
                    pool.offers(d, OffersCall(f"floor-{i}", "bench-floor-token", window, (), True))
                    for d in domains
                ]
                for call in calls:
                    call.result()
            samples.append((time.perf_counter() - began) * 1000)
    finally:
        pool.close()
    return statistics.median(samples)


@dataclass
class Baselines:
    """What the transport and the disk cost in this run, with no negotiation's work."""

    rounds: int  # the protocol's, on the answer's path
    agents: int  # taking part in each
    sync: str
    bare: float  # ms, one gRPC round trip
    fan_out: float  # ms, the rounds as parallel unary calls
    streamed: float  # ms, the rounds through the orchestrator's streams
    written: float  # ms, one store write

    @property
    def least(self) -> float:
        """The least a negotiation costs here: the client's round trip, the rounds, and
        the writes that come one after another on the answer's path."""
        return self.bare + self.streamed + STORE_WRITES * self.written

    def show(self) -> None:
        print(f"  baseline: 1 bare gRPC round trip      {self.bare:8.2f} ms (median)")
        print(
            f"  baseline: {self.rounds} rounds of empty calls     {self.fan_out:8.2f} ms (median; "
            f"each round {self.agents} agents in parallel, unary calls from a thread pool)"
        )
        print(
            f"  baseline: the same over streams       {self.streamed:8.2f} ms (median; empty "
            "offers through the orchestrator's agent pool)"
        )
        print(
            f"  baseline: one store write             {self.written:8.2f} ms (median; SQLite, "
            f"sync={self.sync}, on the stores' disk)"
        )
        print(
            f"  the least a negotiation costs here    {self.least:8.2f} ms (a round trip, "
            f"{self.rounds} rounds over streams, {STORE_WRITES} store writes one after "
            "another: a vote, the decision, a commit)"
        )


def measure_baselines(
    cluster: LocalCluster,
    taking_part: list[str],
    rounds: int,
    folder: Path,
    args: argparse.Namespace,
) -> Baselines:
    return Baselines(
        rounds,
        len(taking_part),
        args.sync,
        bare_round_trips_ms(cluster, 200),
        fan_out_rounds_ms(cluster, taking_part, 200, rounds),
        stream_rounds_ms(cluster, taking_part, 200, rounds),
        store_write_ms(folder, 200, args.sync),
    )


def plot_latency(path: Path, series: dict[str, list[float]], least: float, floor: float) -> Path:
    """One client's latencies as distributions (a line each), with the least this host
    allows and the floor; PNG or SVG by the file's suffix."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for label, samples in series.items():
        ordered = sorted(samples)
        shares = [(i + 1) / len(ordered) for i in range(len(ordered))]
        ax.step(
            ordered,
            shares,
            where="post",
            label=f"{label} (median {statistics.median(ordered):.1f} ms)",
        )
    ax.axvline(least, color="grey", linestyle=":", label=f"the least here ({least:.1f} ms)")
    ax.axvline(floor, color="red", linestyle="--", label=f"floor ({floor:g} ms)")
    ax.set_xlabel("end-to-end negotiation, one client (ms)")
    ax.set_ylabel("share of reservations")
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def print_end_to_end(one: Latency, least: float, floor: float) -> None:
    verdict = "meets" if one.median <= floor else "MISSES"
    if floor < least:
        verdict += ", below the least possible here"
    print(
        f"  end-to-end negotiation, 1 client      {one.median:8.2f} ms (median of "
        f"{len(one.samples)}; p99 {one.p99:.2f} ms; {one.median / least:.1f}x the least; "
        f"floor {floor:g} ms: {verdict})"
    )


def draw(
    args: argparse.Namespace, one: Latency, others: list[Latency], least: float, floor: float
) -> None:
    """`--plot`: this build's latencies and the comparison's, if one ran."""
    if args.plot is None:
        return
    series = {"this build": one.samples}
    if others:
        series[f"at {args.baseline}" if args.baseline else args.compare_with] = others[0].samples
    print(f"  plot: {plot_latency(args.plot, series, least, floor)}")


@dataclass
class Latency:
    samples: list[float] = field(default_factory=list)  # ms
    replies: list[pb.ReservationResp] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def p99(self) -> float:
        return statistics.quantiles(self.samples, n=100)[98]


def latency_ms(clusters: list[LocalCluster], count: int, base: int) -> list[Latency]:
    """One client's reservations, one after another, on each cluster in turn (the order
    flipped every round), so that a comparison sees the same load on this shared host."""
    measured = [Latency() for _ in clusters]
    for i in range(count):
        turn = list(zip(clusters, measured, strict=True))
        for cluster, latency in turn if i % 2 == 0 else reversed(turn):
            began = time.perf_counter()
            reply = cluster.reserve(reservation(f"seq-{i}", i, base))
            latency.samples.append((time.perf_counter() - began) * 1000)
            latency.replies.append(reply)
    return measured


def throughput(
    cluster: LocalCluster, clients: int, per_client: int, base: int, turn: int = 0
) -> tuple[float, list[pb.ReservationResp]]:
    """`clients` threads, each making `per_client` reservations one after another: the
    rate over the whole burst (`turn` keeps each burst's ids and windows apart)."""
    replies: list[pb.ReservationResp] = []
    lock = threading.Lock()

    def client(c: int) -> None:
        stub = cluster.orchestrator()
        mine = []
        for i in range(per_client):
            index = 100_000 + (turn * clients + c) * per_client + i
            mine.append(stub.Reserve(reservation(f"par-{turn}-{c}-{i}", index, base), timeout=60))
        with lock:
            replies.extend(mine)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(replies) / (time.perf_counter() - began), replies


THROUGHPUT_TURNS = 4


def throughput_in_turns(
    clusters: list[LocalCluster], clients: int, per_client: int, base: int
) -> list[tuple[float, list[pb.ReservationResp]]]:
    """The clusters' bursts taking turns (the order flipped every turn), so that a
    comparison of rates sees the same load on this shared host: each cluster's rate
    over all its bursts, and its replies."""
    spent = [0.0 for _ in clusters]
    replies: list[list[pb.ReservationResp]] = [[] for _ in clusters]
    share = max(1, per_client // THROUGHPUT_TURNS)
    for turn in range(THROUGHPUT_TURNS):
        order = list(range(len(clusters)))
        for k in order if turn % 2 == 0 else reversed(order):
            rate, got = throughput(clusters[k], clients, share, base, turn)
            spent[k] += len(got) / rate
            replies[k] += got
    return [(len(r) / t, r) for r, t in zip(replies, spent, strict=True)]


def cpu_seconds(cluster: LocalCluster) -> dict[str, float]:
    """User+system CPU of each process so far (Linux /proc; empty elsewhere)."""
    out = {}
    for name, process in cluster.processes.items():
        try:
            fields = Path(f"/proc/{process.popen.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return {}
        out[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def cpu_per_reservation(before: dict[str, float], after: dict[str, float], count: int) -> float:
    """CPU ms per reservation summed over every process (0 where /proc is not there)."""
    if not before or not after:
        return 0.0
    return sum(after[k] - before[k] for k in after) / count * 1000


def rates(
    cluster: LocalCluster, no_batch: LocalCluster | None, clients: int, per_client: int, base: int
) -> tuple[tuple[float, list[pb.ReservationResp]], float | None]:
    """The cluster's throughput and its replies, and, when `no_batch` runs, that one's
    rate, their bursts taking turns (its ledgers checked)."""
    if no_batch is None:
        return throughput(cluster, clients, per_client, base), None
    warm = no_batch.reserve(reservation("warm-up", 10**6, base))
    measured, (unbatched, got) = throughput_in_turns([cluster, no_batch], clients, per_client, base)
    check_compared(no_batch, [warm, *got], "unbatched comparison")
    return measured, unbatched


def cluster_in(
    workdir: Path,
    source: Path,
    orchestrator: list[str],
    per_domain: bool,
    agents: list[str] | None = None,
) -> LocalCluster:
    """The network's agents (started with `agents`) and an orchestrator started with
    `orchestrator`, in `workdir` (the measured cluster, or a comparison's: `--no-batch`,
    `--compare-with`)."""
    cluster = LocalCluster(source, workdir, orchestrator_args=orchestrator)
    cluster.agent_args = list(agents or [])
    cluster.per_domain = per_domain
    return cluster


def run_revision(cluster: LocalCluster, revision: str, folder: Path) -> None:
    """Make `cluster`'s processes run `revision`'s code (pinned only if it has `--cpu`)."""
    folder.mkdir()
    code = baseline_source(revision, folder)
    cluster.env = {"PYTHONPATH": str(code)}
    helped = subprocess.run(
        [sys.executable, "-m", "braid.cli.agent_cmd", "agent", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ, **cluster.env),
        check=True,
    ).stdout
    cluster.pin = "--cpu" in helped
    # Code from before every port was closed: it serves open and knows no credentials.
    cluster.own_credentials = "--insecure" in helped
    if "--sync" not in helped:  # agents from before their hold store had a choice
        cluster.agent_args = []


def check_compared(cluster: LocalCluster, replies: list[pb.ReservationResp], what: str) -> None:
    check = check_ledgers(cluster.reports(), committed_of(replies))
    if not check.ok or any(not r.success for r in replies):
        raise SystemExit(f"the {what} went wrong: {check.summary()}")


def print_cpu(marks: list[dict[str, float]], counts: list[int], clients: int) -> None:
    """Each process's CPU per reservation for one client and for `clients`, from the CPU
    seconds at the three `marks` and the reservations made between them; then the rate
    at which the CPUs, busy all the time, would make reservations at the latter."""
    start, before, after = marks
    for label, (a, b, n) in {
        "1 client": (start, before, counts[0]),
        f"{clients} clients": (before, after, counts[1]),
    }.items():
        parts = ", ".join(f"{k} {(b[k] - a[k]) / n * 1000:.2f}" for k in b)
        print(f"  CPU ms per reservation, {label}: {parts}")
    spent = cpu_per_reservation(before, after, counts[1])
    cpus = len(os.sched_getaffinity(0))
    if spent:
        print(
            f"  at that CPU per reservation ({spent:.1f} ms) {cpus} CPUs busy all the time "
            f"would do {cpus * 1000 / spent:.0f} reservations/s"
        )


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer reservations")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--network",
        choices=sorted(ENDS),
        default="four",
        help="four: 2 sites and 2 WANs (4 agents take part); fig6a: the paper's Fig. 6a "
        "(site A to site C over both WANs: 6 agents take part)",
    )
    parser.add_argument(
        "--per-domain",
        action="store_true",
        help="each agent reads only its own domain's file; the orchestrator none (it "
        "learns the graph from the agents' views)",
    )
    parser.add_argument(
        "--sync",
        choices=["FULL", "NORMAL"],
        default="FULL",
        help="SQLite synchronous mode of the orchestrator's decision log and of the "
        "agents' hold stores",
    )
    parser.add_argument(
        "--sequential",
        action="store_true",
        help="the orchestrator calls a round's agents one after another",
    )
    parser.add_argument(
        "--orchestrator-args",
        default="",
        help="extra options for the orchestrator, e.g. '--no-batch' or '--batch-linger-ms 4'",
    )
    parser.add_argument(
        "--no-compare",
        action="store_true",
        help="skip the same-run comparisons (throughput without batching, one client's "
        "latency with --compare-with)",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="compare one client's latency with the same cluster running git revision REV "
        "(its src unpacked with git archive), instead of --compare-with",
    )
    parser.add_argument(
        "--compare-with",
        default="--no-speculate",
        help="orchestrator options of the cluster whose one-client latency is measured "
        "taking turns with the main one's (default: --no-speculate, three rounds)",
    )
    parser.add_argument(
        "--plot",
        type=Path,
        metavar="FILE",
        help="also draw one client's latencies (and the comparison's) to FILE, .png or .svg",
    )
    args = parser.parse_args()
    if args.plot is not None:
        check_plot(parser, args.plot)
    return args


PLOT_SUFFIXES = (".png", ".svg")


def check_plot(parser: argparse.ArgumentParser, path: Path) -> None:
    """Refuse a `--plot` that could not be drawn before the run, not after it."""
    if path.suffix.lower() not in PLOT_SUFFIXES:
        parser.error(f"--plot: {str(path)!r} must end in {' or '.join(PLOT_SUFFIXES)}")
    if not path.parent.is_dir():
        parser.error(f"--plot: folder {str(path.parent)!r} does not exist; create it first")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        parser.error("--plot needs matplotlib: pip install '.[plot]'")


def main() -> int:
    args = parse()
    sequential, per_client = (50, 25) if args.quick else (300, 100)
    load_before = os.getloadavg()
    global ends
    ends = ENDS[args.network]
    with tempfile.TemporaryDirectory(prefix="braid-nbench-") as folder:
        source = Path(folder) / "net.yaml"
        if args.network == "fig6a":
            source.write_text(FIG6A.read_text())
        else:
            source.write_text(yaml.safe_dump(NETWORK))
        extra = ["--max-paths", "2", "--sync", args.sync]
        extra += ["--sequential"] if args.sequential else []
        extra += args.orchestrator_args.split()
        agents = ["--sync", args.sync]
        # Offers with the Preps of the guessed split, then Commit; offers first without.
        protocol_rounds = 3 if "--no-speculate" in extra else 2
        cluster = cluster_in(Path(folder) / "run", source, extra, args.per_domain, agents)
        versus = [] if args.baseline else args.compare_with.split()
        paired = not args.no_compare and (args.baseline or versus)
        paired = paired and not set(versus) & set(extra)
        unary = (
            cluster_in(
                Path(folder) / "compared", source, [*extra, *versus], args.per_domain, agents
            )
            if paired
            else None
        )
        if unary is not None and args.baseline:
            run_revision(unary, args.baseline, Path(folder) / "baseline")
        no_batch = (
            cluster_in(
                Path(folder) / "no-batch", source, [*extra, "--no-batch"], args.per_domain, agents
            )
            if not args.no_compare and "--no-batch" not in extra
            else None
        )
        with cluster, unary or contextlib.nullcontext(), no_batch or contextlib.nullcontext():
            base = int(time.time())
            warm = cluster.reserve(reservation("warm-up", 10**6, base))
            taking_part = sorted({s.domain for p in warm.paths for s in p.segments})
            floors = measure_baselines(cluster, taking_part, protocol_rounds, Path(folder), args)
            if unary is not None:
                unary_warm = unary.reserve(reservation("warm-up", 10**6, base))
            start_seq, unary_start = cpu_seconds(cluster), cpu_seconds(unary) if unary else {}
            one, *others = latency_ms([cluster, *([unary] if unary else [])], sequential, base)
            before = cpu_seconds(cluster)
            seq_replies = one.replies
            if unary is not None:
                unary_cpu = cpu_per_reservation(unary_start, cpu_seconds(unary), sequential)
                unary_median = others[0].median
                others[0].replies.append(unary_warm)
                check_compared(unary, others[0].replies, "compared cluster")
            (rate, par_replies), unbatched = rates(
                cluster, no_batch, args.clients, per_client, base
            )
            after = cpu_seconds(cluster)
            replies = [warm, *seq_replies, *par_replies]
            failed = sum(1 for r in replies if not r.success)
            check = check_ledgers(cluster.reports(), committed_of(replies))
    load_after = os.getloadavg()
    fan_out = "sequential" if args.sequential else "parallel"
    print(
        f"negotiation, network {args.network}: orchestrator + {len(cluster.domains)} agents "
        f"on loopback, {len(taking_part)} in each reservation"
        f"{' (each agent its own file)' if args.per_domain else ''} "
        f"(decision log and hold stores sync={args.sync}, {fan_out} calls"
        f"{', ' + args.orchestrator_args if args.orchestrator_args else ''})"
    )
    print(
        f"  load average (1 min) {load_before[0]:.2f} before, {load_after[0]:.2f} after "
        f"({os.cpu_count()} CPUs, shared)"
    )
    floors.show()
    floor = FLOOR_MEDIAN_MS[args.network]
    print_end_to_end(one, floors.least, floor)
    if unary is not None:
        other = f"at {args.baseline}" if args.baseline else f"with {args.compare_with}"
        print(
            f"  {'same, ' + other:<38s}{unary_median:8.2f} ms (its reservations "
            f"taking turns with the above; ratio {one.median / unary_median:.2f}x)"
        )
        streamed_cpu = cpu_per_reservation(start_seq, before, sequential)
        if streamed_cpu and unary_cpu:
            print(
                f"  CPU ms per reservation, all processes: {streamed_cpu:.1f}, "
                f"{unary_cpu:.1f} {other} ({streamed_cpu / unary_cpu:.2f}x)"
            )
    verdict = "meets" if rate >= FLOOR_PER_SECOND else "MISSES"
    print(
        f"  throughput, {args.clients} clients               {rate:8.1f} reservations/s "
        f"({len(par_replies)} reservations; floor {FLOOR_PER_SECOND:g}/s: {verdict})"
    )
    if unbatched is not None:
        print(
            f"  same, one call per message (--no-batch) {unbatched:6.1f} reservations/s "
            f"(bursts taking turns with the above; batching: {rate / unbatched:.2f}x)"
        )
    if start_seq and before and after:
        print_cpu([start_seq, before, after], [sequential, len(par_replies)], args.clients)
    print(f"  refused: {failed} of {len(replies)}")
    print(f"  checker: {check.summary()}")
    draw(args, one, others, floors.least, floor)
    return 0 if check.ok and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
