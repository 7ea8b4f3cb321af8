"""What every braid figure shares: one style, and one save that writes PNG and vector.

matplotlib is imported here only inside the functions, so importing a study,
an experiment or the CLI never loads it; only drawing a figure does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

DPI: Final = 300
VECTOR: Final = ".pdf"  # written beside every PNG unless the caller asks for .svg
SUFFIXES: Final = (".png", ".svg", ".pdf")

# Okabe & Ito's colour-blind-safe palette (without its yellow, too pale on white).
PALETTE: Final = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
MARKERS: Final = ("o", "s", "^", "D", "v", "P", "X")
HATCHES: Final = ("", "//", "..", "xx", "\\\\", "++")
REFERENCE: Final = "#000000"  # reference values: a paper's figures, floors, capacities

_STYLE: Final[dict[RcKeyType, Any]] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "errorbar.capsize": 3,
    "legend.frameon": False,
    "hatch.linewidth": 0.6,
    "pdf.fonttype": 42,  # TrueType in the PDF: text stays text for journals' checks
    "svg.fonttype": "none",
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
}


@contextmanager
def styled(width: float, height: float) -> Iterator[Figure]:
    """A new figure (inches) drawn and saved in braid's style; no pyplot, no display."""
    import matplotlib
    from cycler import cycler
    from matplotlib.figure import Figure

    with matplotlib.rc_context({**_STYLE, "axes.prop_cycle": cycler(color=PALETTE)}):
        yield Figure(figsize=(width, height), layout="constrained")


def save(fig: Figure, path: Path) -> list[Path]:
    """Write `path` as a 300-dpi PNG and a vector file of the same stem; return both.

    `path`'s suffix picks the vector format (.svg or .pdf, PDF when it is .png
    or absent). Call it inside `styled`, so the style applies to the files too.
    """
    suffix = path.suffix.lower()
    if path.suffix and suffix not in SUFFIXES:
        raise ValueError(f"{path.name} must end in one of {', '.join(SUFFIXES)}")
    vector = suffix if suffix in (".svg", ".pdf") else VECTOR
    written = [path.with_suffix(".png"), path.with_suffix(vector)]
    for target in written:
        fig.savefig(target, dpi=DPI, metadata=_metadata(target.suffix))
    return written


def _metadata(suffix: str) -> dict[str, Any]:
    # No creation date: the same data gives the same file.
    if suffix == ".pdf":
        return {"CreationDate": None}
    if suffix == ".svg":
        return {"Date": None}
    return {}


def grouped_bars(
    ax: Axes,
    categories: Sequence[str],
    groups: Sequence[tuple[str, Sequence[float | None], Sequence[tuple[float, float]] | None]],
) -> None:
    """Bars per category, one per group (label, heights, optional (low, high) whiskers).

    A `None` height leaves that bar out. Colours and hatches both tell the
    groups apart, so the figure reads in grey too.
    """
    width = 0.8 / max(len(groups), 1)
    for i, (label, heights, spread) in enumerate(groups):
        offset = (i - (len(groups) - 1) / 2) * width
        xs = [c + offset for c, h in enumerate(heights) if h is not None]
        ys = [h for h in heights if h is not None]
        ax.bar(
            xs,
            ys,
            width * 0.92,
            label=label,
            color=PALETTE[i % len(PALETTE)],
            hatch=HATCHES[i % len(HATCHES)],
            edgecolor="white",
            linewidth=0.5,
        )
        if spread is not None:
            kept = [s for s, h in zip(spread, heights, strict=True) if h is not None]
            low = [y - lo for y, (lo, _) in zip(ys, kept, strict=True)]
            high = [hi - y for y, (_, hi) in zip(ys, kept, strict=True)]
            ax.errorbar(xs, ys, yerr=[low, high], fmt="none", ecolor="#333333", elinewidth=0.8)
    ax.set_xticks(range(len(categories)), list(categories))
    margin = 0.6 if len(categories) > 1 else 1.0  # one category: bars not the full width
    ax.set_xlim(-margin, len(categories) - 1 + margin)
    ax.tick_params(axis="x", length=0)
