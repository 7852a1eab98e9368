"""The study's figures. Every lift shown is computed by ``aces_bench.stats`` functions
(``lift_table`` over the study's pairs, per the figure's grouping: the same function and
pairs as summary.json); the only number computed here is the mean wall time per
visible-skill count in the routing figure.

Each figure function returns a ``FigureOutcome``: the files written, or the reason it
was skipped. A figure is skipped, with the reason stated in the report, when the data
lacks its dimension (one harness, one model per harness, one visible-skill count):
an empty or one-bar plot would mislead more than it shows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm

from aces_bench.metrics import metric_names
from aces_bench.reports.static_live import StaticLiveSection
from aces_bench.reports.style import (
    BASELINE,
    DIVERGING,
    LIFT,
    NEGATIVE,
    OKABE_ITO,
    WITH_SKILL,
    new_figure,
    paper_style,
    save_figure,
)
from aces_bench.stats import StudyStats, lift_table
from aces_bench.stats.pairing import COMPOSITE, OUTCOME, OUTCOME_ONLY, REWARD


@dataclass
class FigureOutcome:
    name: str
    title: str
    caption: str = ""
    paths: dict[str, Path] = field(default_factory=dict)
    skipped: str | None = None

    @property
    def svg(self) -> Path | None:
        return self.paths.get("svg")


@dataclass
class FigureInputs:
    stats: StudyStats
    pairs: pd.DataFrame
    trials: pd.DataFrame
    static: StaticLiveSection | None = None

    @property
    def outcome(self) -> str:
        return self.stats.settings.headline_outcome

    @property
    def level(self) -> float:
        return self.stats.settings.level

    def lift(self, by: tuple[str, ...], outcomes: tuple[str, ...] | None = None) -> pd.DataFrame:
        return lift_table(self.pairs, by=by, outcomes=outcomes or (self.outcome,), level=self.level)


def _pct(x: float | None) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.0f}%"


def _signed(x: float | None) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{x:+.2f}"


def _errs(frame: pd.DataFrame) -> np.ndarray:
    """Asymmetric error bars from ci_lo/ci_hi; zero length where the CI is undefined."""
    lift = frame["lift"].astype(float).to_numpy()
    lo = (lift - frame["ci_lo"].astype(float).to_numpy())
    hi = (frame["ci_hi"].astype(float).to_numpy() - lift)
    return np.nan_to_num(np.vstack([lo, hi]), nan=0.0)


def metric_lift(inp: FigureInputs, out: Path) -> FigureOutcome:
    """Headline: lift per metric (and composite, outcome-only) with 95% CIs; share of positive cases."""
    name, title = "metric_lift", "Skill Lift per metric"
    order = [OUTCOME, *metric_names(), COMPOSITE, OUTCOME_ONLY, REWARD]
    table = inp.stats.lift_pooled.frame().set_index("outcome")
    table = table.loc[[o for o in order if o in table.index]]
    unscored = [o for o in table.index if not table.loc[o, "n"]]
    table = table.loc[table["n"].fillna(0) > 0]
    if table.empty:
        return FigureOutcome(name, title, skipped="no outcome has a scored pair (both conditions scored)")
    with paper_style():
        fig = new_figure(7.0, 3.2)
        ax, ax2 = fig.subplots(1, 2, width_ratios=[3, 2], sharey=True)
        y = np.arange(len(table))[::-1]
        colors = [LIFT if (v or 0) >= 0 else NEGATIVE for v in table["lift"]]
        ax.barh(y, table["lift"].astype(float), color=colors, height=0.6)
        ax.errorbar(table["lift"].astype(float), y, xerr=_errs(table), fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_yticks(y, [f"{o} (n={int(n)})" for o, n in zip(table.index, table["n"], strict=True)])
        ax.set_xlabel(f"lift (with skill − baseline), {int(inp.level * 100)}% CI")
        ax.grid(axis="x", color="#DDDDDD")
        ax.grid(axis="y", visible=False)
        share = table["share_pos"].astype(float)
        ax2.barh(y, share, color=WITH_SKILL, height=0.6)
        for yi, s in zip(y, share, strict=True):
            ax2.text(min(s, 1.0) + 0.02, yi, _pct(s), va="center", fontsize=7)
        ax2.set_xlim(0, 1.15)
        ax2.set_xlabel("share of paired cases with positive lift")
        ax2.grid(axis="x", color="#DDDDDD")
        ax2.grid(axis="y", visible=False)
        fig.suptitle(title)
        paths = save_figure(fig, out, name)
    caption = (f"Mean paired lift over scored pairs of positive cases with the case-clustered t {int(inp.level * 100)}% CI; "
               "right: share of pairs with positive lift.")
    if unscored:
        caption += f" Not shown (no scored pair): {', '.join(unscored)}."
    return FigureOutcome(name, title, caption, paths)


def skill_harness_heatmap(inp: FigureInputs, out: Path) -> FigureOutcome:
    name, title = "skill_harness_heatmap", f"{inp.outcome} lift by skill and harness"
    harnesses = sorted(inp.pairs["harness"].astype(str).unique())
    if len(harnesses) < 2:
        return FigureOutcome(name, title, skipped=f"only one harness ({', '.join(harnesses) or 'none'}): a skill x harness map needs two or more")
    table = inp.lift(("skill", "harness"))
    grid = table.pivot(index="skill", columns="harness", values="lift").astype(float)
    counts = table.pivot(index="skill", columns="harness", values="n")
    values = grid.to_numpy()
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return FigureOutcome(name, title, skipped="no (skill, harness) cell has a scored pair")
    bound = max(float(np.abs(finite).max()), 0.05)
    with paper_style():
        fig = new_figure(1.6 + 1.1 * len(grid.columns), 1.2 + 0.45 * len(grid.index))
        ax = fig.subplots()
        norm = TwoSlopeNorm(vmin=-bound, vcenter=0.0, vmax=bound)
        im = ax.imshow(np.ma.masked_invalid(values), cmap=DIVERGING, norm=norm, aspect="auto")
        ax.set_xticks(range(len(grid.columns)), grid.columns, rotation=30, ha="right")
        ax.set_yticks(range(len(grid.index)), grid.index)
        ax.grid(False)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                n = counts.iat[i, j]
                text = "no pair" if not np.isfinite(values[i, j]) else f"{values[i, j]:+.2f}\nn={int(n)}"
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color="black")
        fig.colorbar(im, ax=ax, label=f"{inp.outcome} lift (0 = white)")
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, "Mean paired lift per cell; diverging colours centred on zero.", paths)


def harness_paired_bars(inp: FigureInputs, out: Path) -> FigureOutcome:
    name, title = "harness_paired_bars", f"{inp.outcome}: with skill vs baseline per harness"
    table = inp.lift(("harness",))
    table = table.loc[table["n"] > 0]
    if len(table) < 2:
        return FigureOutcome(name, title, skipped="fewer than two harnesses with scored pairs: the headline figure covers one harness")
    with paper_style():
        fig = new_figure(1.5 + 1.2 * len(table), 3.0)
        ax = fig.subplots()
        x = np.arange(len(table))
        ax.bar(x - 0.2, table["mean_with"].astype(float), 0.4, color=WITH_SKILL, label="with skill")
        ax.bar(x + 0.2, table["mean_base"].astype(float), 0.4, color=BASELINE, label="baseline")
        for xi, (_, r) in zip(x, table.iterrows(), strict=True):
            top = max(r["mean_with"], r["mean_base"])
            ax.text(xi, top + 0.03, f"lift {_signed(r['lift'])}\nn={int(r['n'])}", ha="center", fontsize=7)
        ax.set_xticks(x, table["harness"], rotation=20, ha="right")
        ax.set_ylim(0, 1.25)
        ax.set_ylabel(f"mean {inp.outcome}")
        ax.legend(loc="upper right", ncols=2)
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, "Means over scored pairs of each harness; the label is the paired lift.", paths)


def harness_model_cells(inp: FigureInputs, out: Path) -> FigureOutcome:
    name, title = "harness_model_cells", f"{inp.outcome} lift per harness-model cell"
    table = inp.lift(("harness", "model"))
    table = table.loc[table["n"] > 0].reset_index(drop=True)
    if len(table) < 2:
        return FigureOutcome(name, title, skipped="fewer than two harness-model cells with scored pairs")
    with paper_style():
        fig = new_figure(6.0, 1.0 + 0.35 * len(table))
        ax = fig.subplots()
        y = np.arange(len(table))[::-1]
        colors = [LIFT if v >= 0 else NEGATIVE for v in table["lift"].astype(float)]
        ax.barh(y, table["lift"].astype(float), color=colors, height=0.6)
        ax.errorbar(table["lift"].astype(float), y, xerr=_errs(table), fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_yticks(y, [f"{h} · {m} (n={int(n)})" for h, m, n in zip(table["harness"], table["model"], table["n"], strict=True)])
        ax.grid(axis="x", color="#DDDDDD")
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(f"lift, {int(inp.level * 100)}% CI")
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, "Paired lift per (harness, model) with the paired-case normal CI.", paths)


def model_sweep(inp: FigureInputs, out: Path) -> FigureOutcome:
    name, title = "model_sweep", f"Same-harness model sweep ({inp.outcome})"
    table = inp.lift(("harness", "model"))
    table = table.loc[table["n"] > 0]
    swept = [h for h, part in table.groupby("harness", sort=True) if len(part) >= 2]
    if not swept:
        return FigureOutcome(name, title, skipped="no harness was run with two or more models")
    with paper_style():
        fig = new_figure(max(4.8, 3.4 * len(swept)), 3.2)
        axes = np.atleast_1d(fig.subplots(1, len(swept), squeeze=False)[0])
        for ax, h in zip(axes, swept, strict=True):
            part = table.loc[table["harness"] == h].sort_values(["mean_base", "model"], kind="stable")
            x = np.arange(len(part))
            ax.plot(x, part["mean_base"].astype(float), marker="o", color=BASELINE, label="baseline")
            ax.plot(x, part["mean_with"].astype(float), marker="s", color=WITH_SKILL, label="with skill")
            ax.plot(x, part["lift"].astype(float), marker="^", color=LIFT, label="lift")
            ax.axhline(0, color="black", linewidth=0.6)
            ax.set_xticks(x, part["model"], rotation=20, ha="right")
            ax.set_title(h)
            ax.set_ylabel(inp.outcome)
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=3)
        fig.suptitle(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, "Models ordered by baseline score; a stronger baseline leaves less room for lift.", paths)


def routing_stress(inp: FigureInputs, out: Path) -> FigureOutcome:
    name, title = "routing_stress", "Routing stress: lift and wall time vs visible skills"
    if "n_visible_skills_with" not in inp.pairs.columns:
        return FigureOutcome(name, title, skipped="the trials table has no n_visible_skills column")
    pairs = inp.pairs.assign(visible=inp.pairs["n_visible_skills_with"])
    pairs = pairs.loc[pairs["visible"].notna()]
    levels = sorted(pairs["visible"].astype(int).unique())
    if len(levels) < 2:
        return FigureOutcome(name, title, skipped=f"every with-skill trial saw the same number of skills ({levels[0] if levels else 'none'})")
    table = lift_table(pairs.assign(visible=pairs["visible"].astype(int)), by=("visible",), outcomes=(inp.outcome,), level=inp.level)
    trials = inp.trials.loc[inp.trials["condition"] == "with_skill"]
    wall = (trials.assign(visible=trials["n_visible_skills"]).dropna(subset=["visible", "wall_sec"])
            .groupby("visible")["wall_sec"].mean() if "wall_sec" in trials else pd.Series(dtype=float))
    with paper_style():
        fig = new_figure(6.0, 3.0)
        ax = fig.subplots()
        x = table["visible"].astype(int).to_numpy()
        ax.errorbar(x, table["lift"].astype(float), yerr=_errs(table), marker="o", color=LIFT, capsize=3, label=f"{inp.outcome} lift")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xlabel("skills visible to the agent (with-skill arm)")
        ax.set_ylabel("lift")
        ax.set_xticks(x)
        ax2 = ax.twinx()
        ax2.spines["right"].set_visible(True)
        ax2.grid(False)
        if len(wall):
            ax2.plot(wall.index.astype(int), wall.to_numpy(float), marker="s", linestyle="--", color=OKABE_ITO["purple"],
                     label="mean wall time (with skill)")
        ax2.set_ylabel("wall time (s)")
        ax2.set_ylim(bottom=0)  # a twin axis cut above 0 would make a small time change look steep
        handles = ax.get_legend_handles_labels()
        handles2 = ax2.get_legend_handles_labels()
        fig.legend(handles[0] + handles2[0], handles[1] + handles2[1], loc="outside lower center", ncols=2)
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    note = "" if len(wall) else " Wall time was not recorded."
    return FigureOutcome(name, title, "Lift (paired-case CI) and mean with-skill wall time by the number of visible skills." + note, paths)


GATE = 70


def _score_range(x: np.ndarray) -> tuple[float, float]:
    """An x range around the scores (at least 10 points wide, inside 0-100 plus a margin for labels)."""
    lo, hi = float(x.min()), float(x.max())
    pad = max(2.0, 0.1 * (hi - lo), (10.0 - (hi - lo)) / 2)
    return max(lo - pad, 0.0), min(hi + pad, 101.0)


def _label_points(ax, x: np.ndarray, y: np.ndarray, labels: list[str]) -> None:
    """Number the points and list the numbers' skills beside the axes (names never overlap).

    Points at the same spot (same score, same lift) share one label, e.g. ``2,3``.
    """
    order = sorted(range(len(labels)), key=lambda i: labels[i])
    number = {i: k + 1 for k, i in enumerate(order)}
    spots: dict[tuple[float, float], list[int]] = {}
    for i in order:
        spots.setdefault((round(float(x[i]), 2), round(float(y[i]), 4)), []).append(number[i])
    for (px, py), nums in spots.items():
        ax.annotate(",".join(map(str, nums)), (px, py), xytext=(5, 4), textcoords="offset points", fontsize=7)
    key = "\n".join(f"{number[i]}  {labels[i]}  ({x[i]:.1f}, {y[i]:+.3f})" for i in order)
    ax.text(1.03, 1.0, key, transform=ax.transAxes, va="top", ha="left", fontsize=7)


def _corr_text(c) -> str:
    if c is None or c.rho is None:
        return f"Spearman rho undefined ({c.note if c is not None and c.note else 'no data'}), n = {c.n if c else 0}"
    ci = (f"{int(c.level * 100)}% CI [{c.ci_lo:+.2f}, {c.ci_hi:+.2f}]" if c.ci_lo is not None
          else "no CI (Fisher-z needs n >= 4)")
    return f"Spearman rho = {c.rho:+.2f}, {ci}, n = {c.n}"


def static_vs_live(inp: FigureInputs, out: Path) -> FigureOutcome:
    """Tier 1 structural score against live lift, one point per skill."""
    name, title = "static_vs_live", f"Structural score vs {inp.outcome} lift"
    sec = inp.static
    if sec is None or sec.status != "ran" or inp.stats.static_by_skill is None:
        return FigureOutcome(name, title, skipped=(sec.reason if sec is not None and sec.reason else "no static scan ran"))
    table = inp.stats.static_by_skill.frame().dropna(subset=["static", "lift"])
    if table.empty:
        return FigureOutcome(name, title, skipped="no skill has both a structural score and a scored pair")
    with paper_style():
        fig = new_figure(7.0, max(3.4, 0.8 + 0.13 * len(table)))
        ax = fig.subplots()
        ax.margins(y=0.15)
        x, y = table["static"].astype(float).to_numpy(), table["lift"].astype(float).to_numpy()
        ax.scatter(x, y, s=36, color=WITH_SKILL, edgecolor="black", linewidth=0.5, zorder=3)
        _label_points(ax, x, y, [str(v) for v in table["skill"]])
        ax.axhline(0, color="black", linewidth=0.6)
        lo, hi = _score_range(x)
        ax.set_xlim(lo, hi)
        if lo < GATE < hi:
            ax.axvline(GATE, color=NEGATIVE, linewidth=0.8, linestyle=":", label=f"default gate ({GATE})")
            ax.legend(loc="best")
        ax.set_xlabel("Tier 1 structural score (0-100)")
        ax.set_ylabel(f"mean {inp.outcome} lift")
        ax.grid(axis="x", color="#DDDDDD")
        ax.set_title(title)
        ax.text(0.0, -0.28, _corr_text(sec.tier1), transform=ax.transAxes, fontsize=8)
        paths = save_figure(fig, out, name)
    caption = f"One point per target skill. {_corr_text(sec.tier1)}."
    if sec.caveat and sec.tier1 is not None and sec.tier1.rho is not None:  # an undefined rho already says why
        caption += f" Caveat: {sec.caveat}."
    return FigureOutcome(name, title, caption, paths)


FIGURES: tuple[Callable[[FigureInputs, Path], FigureOutcome], ...] = (
    metric_lift, skill_harness_heatmap, harness_paired_bars, harness_model_cells, model_sweep, routing_stress,
    static_vs_live,
)


def draw_all(inp: FigureInputs, out_dir: Path) -> list[FigureOutcome]:
    """Every figure, in report order; skipped ones carry their reason."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [fn(inp, out_dir) for fn in FIGURES]
