"""The success-rate figure (Chung et al. Fig. 6c, with braid's strategies beside it)."""

from __future__ import annotations

from pathlib import Path

from braid.studies.figures import MARKERS, PALETTE, REFERENCE, SUFFIXES, save, styled
from braid.studies.success_rate.evaluate import PAPER_STRATEGIES
from braid.studies.success_rate.sim import PAPER_FIGURES
from braid.studies.success_rate.study import SuccessRateStudy

DODGE = 0.06  # sideways offset between strategies, in domains: coinciding points stay visible
# The paper's figures drawn as points: (figure key, participant domains).
PAPER_POINTS = (("two paths (Fig. 6b)", 2), ("four visible domains", 4))


def plot_success_rate(study: SuccessRateStudy, path: Path) -> list[Path]:
    """Write the figure as a 300-dpi PNG and a vector file beside it; return both.

    `path`'s suffix picks the vector format: .svg or .pdf (PDF for .png).
    """
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"--plot: {path.name} must end in one of {', '.join(SUFFIXES)}")
    rates = study.rates
    means = {s: [100 * x for x in rates.mean[s]] for s in rates.strategies}
    spread = {s: [100 * x for x in rates.stdev[s]] for s in rates.strategies}
    with styled(7.8, 4.2) as fig:
        ax = fig.subplots()
        for i, strategy in enumerate(rates.strategies):
            paper = strategy in PAPER_STRATEGIES
            twin = next((s for s in rates.strategies[:i] if means[s] == means[strategy]), None)
            label = strategy if paper else f"{strategy} (braid)"
            if twin is not None:
                label += f"\n  = {twin} at every point"
            offset = (i - (len(rates.strategies) - 1) / 2) * DODGE
            ys = means[strategy]
            # Whiskers stop at 0 and 100 %: a success rate has no values beyond them.
            low = [y - max(y - s, 0.0) for y, s in zip(ys, spread[strategy], strict=True)]
            high = [min(y + s, 100.0) - y for y, s in zip(ys, spread[strategy], strict=True)]
            ax.errorbar(
                [d + offset for d in rates.domains],
                ys,
                yerr=[low, high],
                color=PALETTE[i % len(PALETTE)],
                marker=MARKERS[i % len(MARKERS)],
                markersize=5,
                markerfacecolor="white" if twin is not None else PALETTE[i % len(PALETTE)],
                linestyle="-" if paper else "--",
                linewidth=1.4,
                elinewidth=0.8,
                label=label,
            )
        single = PAPER_FIGURES["single domain"]
        ax.axhline(
            100 * rates.single,
            color=REFERENCE,
            linestyle=":",
            linewidth=1,
            label=f"single domain, this run ({100 * rates.single:.1f} %)",
        )
        ax.axhline(
            single,
            color="#777777",
            linestyle="-.",
            linewidth=1,
            label=f"single domain, Chung et al. ({single:g} %)",
        )
        shown = [(PAPER_FIGURES[key], d) for key, d in PAPER_POINTS if d in rates.domains]
        if shown:
            ax.plot(
                [d for _, d in shown],
                [value for value, _ in shown],
                linestyle="none",
                marker="*",
                markersize=15,
                markerfacecolor="none",
                markeredgecolor=REFERENCE,
                markeredgewidth=1.2,
                zorder=5,
                label="Chung et al.'s figures:\n  "
                + ", ".join(f"{value:g} % at {d}" for value, d in shown),
            )
        ax.set_xticks(list(rates.domains))
        ax.set_xlim(min(rates.domains) - 0.3, max(rates.domains) + 0.3)
        ax.set_xlabel("participant domains (independent paths)")
        ax.set_ylabel("success rate (%)")
        ax.set_ylim(0, 105)
        ax.set_yticks(range(0, 101, 20))
        config = study.config
        ax.set_title(
            f"Success rate: {config.repetitions} × {config.requests} requests, "
            f"{config.entries}-entry schedules, seed {study.seed}"
        )
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            title=f"mean ± 1 stdev over\n{config.repetitions} repetitions;\npoints offset sideways",
            title_fontsize=8,
            alignment="left",
        )
        return save(fig, path)
