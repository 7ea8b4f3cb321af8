"""`braid emulate`: Mininet + Open vSwitch experiments with real TCP (needs root)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Annotated, Any, Protocol, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from braid.cli.common import err_console, fail

app = typer.Typer(
    help="Emulate reservations on Mininet + Open vSwitch (userspace datapath) with iperf3 "
    "traffic and compare with the seeds' figures. Needs root.",
    no_args_is_help=True,
)
console = Console()

DriverOpt = Annotated[
    str, typer.Option("--driver", help="Southbound driver: direct (ovs-ofctl) or controller.")
]
ShortOpt = Annotated[
    bool, typer.Option("--short", help="A few seconds per run and fewer runs (for CI).")
]
OutOpt = Annotated[
    Path | None, typer.Option("--out", help="Output directory [default: emulate-results/NAME].")
]
ScaleOpt = Annotated[
    float | None, typer.Option("--scale", help="Emulated rate = seed rate x SCALE.")
]
SecondsOpt = Annotated[
    float | None, typer.Option("--seconds", help="Measured seconds per iperf3 run.")
]
MtuOpt = Annotated[int, typer.Option("--mtu", help="MTU of every emulated interface.")]
StrictOpt = Annotated[
    bool, typer.Option("--strict", help="Exit with status 1 when a floor is missed.")
]
LatencyOpt = Annotated[
    float | None,
    typer.Option(
        "--latency",
        help="One-way delay of every link, ms, through braid-dp link "
        "(default: each link's latency_ms in the topology).",
        min=0,
    ),
]
RealtimeOpt = Annotated[
    bool | None,
    typer.Option(
        "--realtime/--no-realtime",
        help="Link emulators send from real-time threads (accurate delays on a busy host) "
        "(default: on for packet-split only).",
    ),
]


class _RichProgress:
    """`step` announces the run that starts now, so the runs before it are done."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: Any = None
        self.steps = 0

    def start(self, total: int, title: str) -> None:
        self.task = self.progress.add_task(title, total=total, label="")

    def step(self, label: str) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.steps, label=label)
            self.steps += 1

    def finish(self) -> None:
        if self.task is not None:
            self.progress.update(self.task, completed=self.steps, label="done")


@contextmanager
def _progress() -> Iterator[_RichProgress]:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[label]}"),
    )
    with Progress(*columns, console=err_console, transient=False) as progress:
        yield _RichProgress(progress)


def _terminate_as_interrupt(signum: int, frame: FrameType | None) -> None:
    del signum, frame
    raise KeyboardInterrupt  # runs every cleanup on the way out, as Ctrl-C does


def _ready(driver: str) -> None:
    from braid.adapters.emulation.prereqs import missing_prerequisites

    if driver not in ("direct", "controller"):
        fail(f"--driver must be direct or controller, got {driver!r}")
    missing = missing_prerequisites()
    if missing:
        lines = "\n".join(f"  - {m}" for m in missing)
        fail(f"braid emulate cannot run here:\n{lines}")
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)


def _run(name: str, out: Path | None, strict: bool, experiment: Callable[[Any], Any]) -> None:
    from braid.core.errors import InputError
    from braid.emulation.plots import PLOTTERS
    from braid.emulation.report import write_report

    try:
        with _progress() as progress:
            report = experiment(progress)
            progress.finish()
    except InputError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted; the emulated network was torn down[/]")
        raise typer.Exit(130) from None
    for note in report.notes:
        console.print(f"[dim]{note}[/]")
    console.print(report.markdown())
    files = write_report(report, out or Path("emulate-results") / name, PLOTTERS[name])
    console.print("wrote " + ", ".join(str(f) for f in files))
    if strict and not report.passed:
        raise typer.Exit(1)


def _session(driver: str, mtu: int, latency: float | None, realtime: bool | None) -> Any:
    from braid.emulation.session import SessionOptions

    return SessionOptions(driver=driver, mtu=mtu, latency_ms=latency, realtime=bool(realtime))


@app.command("check")
def check() -> None:
    """Say whether this host can run the experiments, and what to install if not."""
    from braid.adapters.emulation.prereqs import missing_prerequisites, netem_note, qdisc_support

    missing = missing_prerequisites()
    for item in missing:
        console.print(f"[red]missing:[/] {item}")
    if not missing:
        console.print(
            "[green]ready:[/] root, Open vSwitch, Mininet, iperf3, ethtool, tc htb, braid-dp"
        )
        note = netem_note(qdisc_support())
        if note:
            console.print(f"[yellow]note:[/] {note}")
    raise typer.Exit(1 if missing else 0)


@app.command("clean")
def clean() -> None:
    """Remove what a crashed emulation left: host processes, bridges, veths (like mn -c)."""
    from braid.adapters.emulation.sendbuffer import restore_send_buffer
    from braid.adapters.emulation.sweep import EmulationBusyError, exclusive, sweep

    try:
        with exclusive(timeout=0):
            removed = sweep()
            restored = restore_send_buffer()
    except EmulationBusyError as exc:
        fail(str(exc))
    if restored is not None:
        removed.append(
            f"net.core.wmem_default = {restored.default}, net.core.wmem_max = {restored.ceiling}"
            " (restored)"
        )
    console.print("\n".join(removed) if removed else "nothing to clean")


class _Scaled(Protocol):
    scale: float
    seconds: float
    session: Any


_O = TypeVar("_O", bound=_Scaled)


def _options(
    make: Callable[[Any, bool], _O],
    driver: str,
    mtu: int,
    short: bool,
    scale: float | None,
    seconds: float | None,
    latency: float | None = None,
    realtime: bool | None = None,
) -> _O:
    """An experiment's options after the prerequisite check: short or full, then the overrides."""
    _ready(driver)
    options = make(_session(driver, mtu, latency, realtime), short)
    if realtime is not None:  # the experiment's own default otherwise
        options.session.realtime = realtime
    options.scale = scale or options.scale
    options.seconds = seconds or options.seconds
    return options


@app.command("sdx-split")
def sdx_split(
    driver: DriverOpt = "direct",
    short: ShortOpt = False,
    out: OutOpt = None,
    scale: ScaleOpt = None,
    seconds: SecondsOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
    latency: LatencyOpt = None,
    realtime: RealtimeOpt = None,
) -> None:
    """One reservation over one tunnel vs split over two at SS1-SS5 (seed 000 Fig. 8)."""
    from braid.emulation.experiments.sdx_split import SdxOptions, run_sdx_split

    options = _options(SdxOptions.of, driver, mtu, short, scale, seconds, latency, realtime)
    _run("sdx-split", out, strict, lambda p: run_sdx_split(options, p))


@app.command("multipath")
def multipath(
    driver: DriverOpt = "direct",
    short: ShortOpt = False,
    out: OutOpt = None,
    scale: ScaleOpt = None,
    seconds: SecondsOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
    latency: LatencyOpt = None,
    realtime: RealtimeOpt = None,
    flows: Annotated[
        str | None, typer.Option("--flows", help="Flow counts, comma-separated (e.g. 8,16,32).")
    ] = None,
    cases: Annotated[
        str | None,
        typer.Option("--cases", help="Cases, comma-separated: '2 equal', '2 unequal', '3 paths'."),
    ] = None,
) -> None:
    """N TCP flows over 2 or 3 disjoint paths vs the best single path (seed 002 Table II)."""
    from braid.core.errors import InputError
    from braid.emulation.experiments.multipath import (
        MultipathOptions,
        parse_cases,
        parse_flows,
        run_multipath,
    )

    try:
        flow_counts = parse_flows(flows) if flows else None
        case_names = parse_cases(cases) if cases else None
    except InputError as exc:
        fail(str(exc))
    options = _options(MultipathOptions.of, driver, mtu, short, scale, seconds, latency, realtime)
    options.flows = flow_counts or options.flows
    options.cases = case_names or options.cases
    _run("multipath", out, strict, lambda p: run_multipath(options, p))


@app.command("tenants")
def tenants(
    driver: DriverOpt = "direct",
    short: ShortOpt = False,
    out: OutOpt = None,
    scale: ScaleOpt = None,
    seconds: SecondsOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
    latency: LatencyOpt = None,
    realtime: RealtimeOpt = None,
) -> None:
    """Two tenants on TALON's 7-switch network: braid's allocation vs a shared path (seed 004)."""
    from braid.emulation.experiments.tenants import TenantOptions, run_tenants

    options = _options(TenantOptions.of, driver, mtu, short, scale, seconds, latency, realtime)
    _run("tenants", out, strict, lambda p: run_tenants(options, p))


@app.command("guarantees")
def guarantees(
    driver: DriverOpt = "direct",
    short: ShortOpt = False,
    out: OutOpt = None,
    scale: ScaleOpt = None,
    seconds: SecondsOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
    realtime: RealtimeOpt = None,
    policing: Annotated[
        str,
        typer.Option(
            "--policing",
            help="The enforced run's policing: booked (each reservation as the scenario "
            "books it: hard, soft, hard), soft or hard for all three, or none (only the "
            "run with enforcement off).",
        ),
    ] = "booked",
    baseline: Annotated[
        bool,
        typer.Option(
            "--baseline/--no-baseline",
            help="Also run with enforcement off (the rules only route), to compare with.",
        ),
    ] = True,
) -> None:
    """Three reservations and a best-effort flood on one link: what braid's policing holds."""
    from braid.core.errors import InputError
    from braid.emulation.experiments.guarantees import (
        GuaranteeOptions,
        parse_policing_choice,
        run_guarantees,
    )

    try:
        chosen = parse_policing_choice(policing)
    except InputError as exc:
        fail(str(exc))
    options = _options(GuaranteeOptions.of, driver, mtu, short, scale, seconds, None, realtime)
    options.policing = chosen
    options.baseline = baseline
    _run("guarantees", out, strict, lambda p: run_guarantees(options, p))


@app.command("packet-split")
def packet_split(
    driver: DriverOpt = "direct",
    short: ShortOpt = False,
    out: OutOpt = None,
    scale: ScaleOpt = None,
    seconds: SecondsOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
    realtime: RealtimeOpt = None,
    mdis: Annotated[
        str | None, typer.Option("--mdis", help="Figure 3's MDI values, e.g. 0,0.1,0.2,0.3.")
    ] = None,
    classic_tcp: Annotated[
        bool,
        typer.Option(
            "--classic-tcp/--no-classic-tcp",
            help="Also run Figure 3 on 2017's TCP (no RACK, reordering window 3).",
        ),
    ] = True,
    parts: Annotated[
        str | None,
        typer.Option(
            "--parts",
            help="Which of seed 002's results, comma-separated: table2, fig3, fig4 (a path "
            "congested, weights recomputed), fig5 (against MPTCP), fairness (Jain's index, "
            "10 flows) (default: all; with --short: table2, fig3, fig4).",
        ),
    ] = None,
    trials: Annotated[
        int | None,
        typer.Option("--trials", min=1, help="Runs per Table II and Figure 5 point (median)."),
    ] = None,
) -> None:
    """One TCP flow split per packet over two paths by braid's edges (seed 002: Table II,
    Figures 3, 4 and 5, intra-flow fairness)."""
    from braid.emulation.experiments.packet_split import (
        PARTS,
        PacketSplitOptions,
        run_packet_split,
    )

    options = _options(PacketSplitOptions.of, driver, mtu, short, scale, seconds, None, realtime)
    if parts is not None:
        chosen = tuple(p.strip() for p in parts.split(",") if p.strip())
        unknown = [p for p in chosen if p not in PARTS]
        if unknown or not chosen:
            fail(f"--parts: {parts!r}: choose from {', '.join(PARTS)}")
        options.parts = chosen
    if trials is not None:
        options.trials = trials
    if mdis is not None:
        try:
            options.mdis = tuple(float(v) for v in mdis.split(",") if v.strip())
        except ValueError:
            fail(f"--mdis: {mdis!r}: give numbers, comma-separated")
        if not options.mdis or any(not 0 <= m < 0.4 for m in options.mdis):
            fail(f"--mdis: {mdis!r}: each MDI must be 0 to below 0.4 (braid refuses above)")
    options.classic_tcp = classic_tcp and not short
    _run("packet-split", out, strict, lambda p: run_packet_split(options, p))


@app.command("service")
def service(
    driver: DriverOpt = "direct",
    short: ShortOpt = False,
    out: OutOpt = None,
    scale: ScaleOpt = None,
    seconds: SecondsOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
    latency: LatencyOpt = None,
    realtime: RealtimeOpt = None,
) -> None:
    """The service programs the switches: rules at the start, a hitless modify, a clean cancel."""
    from braid.emulation.experiments.service import ServiceOptions, run_service

    options = _options(ServiceOptions.of, driver, mtu, short, scale, seconds, latency, realtime)
    _run("service", out, strict, lambda p: run_service(options, p))


@app.command("service-failover")
def service_failover(
    driver: DriverOpt = "direct",
    short: ShortOpt = False,
    out: OutOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
) -> None:
    """A protected reservation's traffic on its standby after a cut link is posted down."""
    from braid.emulation.experiments.service_failover import (
        ServiceFailoverOptions,
        run_service_failover,
    )

    options = _options(ServiceFailoverOptions.of, driver, mtu, short, None, None, None, None)
    _run("service-failover", out, strict, lambda p: run_service_failover(options, p))


@app.command("failover")
def failover(
    short: ShortOpt = False,
    out: OutOpt = None,
    scale: ScaleOpt = None,
    mtu: MtuOpt = 9000,
    strict: StrictOpt = False,
    period: Annotated[float | None, typer.Option("--period", help="T, seconds.")] = None,
    events: Annotated[int | None, typer.Option("--events", help="n degradations.")] = None,
    methods: Annotated[
        str | None,
        typer.Option(
            "--methods",
            help="direct,controller (monitors), ff,ff-bfd (fast-failover groups, without and "
            "with BFD; cut only), comma-separated.",
        ),
    ] = None,
    degradations: Annotated[
        str | None, typer.Option("--degradations", help="path-switch,rtt-extension,cut.")
    ] = None,
    extra: Annotated[
        str | None, typer.Option("--extra", help="Extra flow entries per fail-over, e.g. 10,100.")
    ] = None,
    bfd_interval: Annotated[
        int | None,
        typer.Option("--bfd-interval", help="BFD's min_tx and min_rx for ff-bfd, ms [50]."),
    ] = None,
) -> None:
    """Seed 003: monitors at two sites fail over direct vs controller; impulse responses."""
    from braid.emulation.experiments.failover import (
        DEGRADATIONS,
        METHODS,
        check_options,
        run_failover,
    )
    from braid.emulation.failover.config import FailoverOptions

    options = _options(FailoverOptions.of, "direct", mtu, short, scale, None)
    options.period = period or options.period
    options.events = events or options.events
    if bfd_interval is not None:
        options.bfd_ms = bfd_interval
    picked = {
        "--methods": (methods, METHODS),
        "--degradations": (degradations, DEGRADATIONS),
    }
    for option, (given, known) in picked.items():
        names = tuple(n.strip() for n in given.split(",")) if given else None
        if names is not None and (not names or any(n not in known for n in names)):
            fail(f"{option}: {given!r}: choose from {', '.join(known)}")
        if names is not None and option == "--methods":
            options.methods = names
        elif names is not None:
            options.degradations = names
    if extra is not None:
        try:
            options.extra = tuple(int(n) for n in extra.split(",") if n.strip())
        except ValueError:
            fail(f"--extra: {extra!r}: give whole numbers, comma-separated")
        if any(n < 0 or n > 1000 for n in options.extra):
            fail(f"--extra: {extra!r}: each count must be 0 to 1000")
    if options.period <= 0 or options.events < 1:
        fail("--period must be positive and --events at least 1")
    try:
        check_options(options)
    except ValueError as exc:
        fail(str(exc))
    _run("failover", out, strict, lambda p: run_failover(options, p))
