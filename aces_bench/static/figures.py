"""Scan figures in the report style: Agg backend, deterministic SVG, Okabe-Ito colours.

Determinism: a fixed ``svg.hashsalt`` and no Date metadata, so the same scan gives
byte-identical files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aces_bench.core.io import write_with
from aces_bench.static.models import RuleShare

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "bluish_green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish_purple": "#CC79A7",
}
DIMENSION_COLOURS = {
    "correctness": OKABE_ITO["blue"],
    "discoverability": OKABE_ITO["orange"],
    "reliability": OKABE_ITO["bluish_green"],
    "efficiency": OKABE_ITO["reddish_purple"],
}
STYLE = {
    "svg.hashsalt": "aces-bench",
    "svg.fonttype": "none",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 10,
    "figure.dpi": 100,
}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(STYLE)
    return plt


def _save(fig: Any, path: Path) -> Path:
    plt = _pyplot()
    try:
        write_with(
            path,
            lambda tmp: fig.savefig(
                tmp, format="svg", metadata={"Date": None}, bbox_inches="tight"
            ),
        )
    finally:
        plt.close(fig)
    return path


def score_histogram(
    scores: list[float],
    path: Path,
    *,
    reported_mean: float | None = None,
    gate: float = 70.0,
) -> Path:
    """Histogram of Tier 1 scores with the gate and 80 lines (and the paper's mean when given)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.hist(
        scores, bins=range(0, 102, 2), color=OKABE_ITO["sky_blue"], edgecolor="white"
    )
    ax.axvline(
        gate, color=OKABE_ITO["vermillion"], linestyle="--", label=f"gate {gate:g}"
    )
    if gate != 80:
        ax.axvline(80, color=OKABE_ITO["black"], linestyle=":", label="80")
    if reported_mean is not None:
        ax.axvline(
            reported_mean,
            color=OKABE_ITO["orange"],
            linestyle="-",
            label=f"paper mean {reported_mean:g}",
        )
    lo = min(scores, default=0)
    ax.set_xlim(max(0, min(lo, gate, reported_mean or 100) - 5), 100)
    ax.set_xlabel("structural score (Tier 1)")
    ax.set_ylabel("skills")
    ax.set_title(f"Structural scores, n = {len(scores)}")
    ax.legend(frameon=False, loc="upper left")
    return _save(fig, path)


def top_violations(top: list[RuleShare], path: Path) -> Path:
    """Horizontal bars: share of skills violating each of the top rules, coloured by dimension."""
    plt = _pyplot()
    rows = list(reversed(top))
    fig, ax = plt.subplots(figsize=(6.5, 0.35 * max(len(rows), 1) + 1.2))
    ax.barh(
        [f"{r.rule_id} {r.rule_name}" for r in rows],
        [100 * r.share for r in rows],
        color=[DIMENSION_COLOURS[r.dimension] for r in rows],
    )
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of skills violating the rule")
    ax.set_title("Top violated rules")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in DIMENSION_COLOURS.values()]
    ax.legend(
        handles, list(DIMENSION_COLOURS), frameon=False, loc="lower right", fontsize=8
    )
    return _save(fig, path)


def structural_vs_rubric(
    xs: list[float], ys: list[float], stats: dict[str, Any], path: Path
) -> Path:
    """Scatter of Tier 1 against Tier 2 with Spearman and Pearson in the title."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(4.6, 4))
    ax.scatter(xs, ys, s=16, color=OKABE_ITO["blue"], alpha=0.8)
    ax.set_xlabel("structural score (Tier 1)")
    ax.set_ylabel("rubric score (Tier 2, 0-100)")

    def fmt(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.2f}"

    ax.set_title(
        f"Spearman {fmt(stats.get('spearman'))}, Pearson {fmt(stats.get('pearson'))}, n = {len(xs)}"
    )
    return _save(fig, path)
