"""The study's figures. Every table shown was computed by the analysis before drawing
(``aces_bench.analysis.figure_data.figure_data``, with ``aces_bench.stats.lift_table``)
over one named analysis set (``aces_bench.analysis.sets``): the headline's (the primary
arm, positive cases) unless the figure is about another arm (routing stress, the model
slice), which it then names. The figures only read ``FigureData``'s fields and draw.

Each figure function returns a ``FigureOutcome``: the files written (at text width and
at single-column width, ``style.draw_sizes``), or the reason it was skipped. A figure is
skipped, with the reason stated in the report, when the data lacks its dimension (one
harness, one model per harness, one visible-skill count): an empty or one-bar plot
would mislead more than it shows. A series produced with a stand-in (reference agent,
heuristic judge, offline model) is hatched (bars) or hollow (points) and says so in the
legend.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, MaxNLocator, NullFormatter, NullLocator

from aces_bench.core.metrics import metric_names
from aces_bench.core.order import natural_key
from aces_bench.core.outcomes import COMPOSITE, OUTCOME, OUTCOME_ONLY, REWARD
from aces_bench.core.registry import Registry
from aces_bench.reports.figure_data import FigureData, FigureOutcome, LiftView
from aces_bench.reports.labels import outcome_label
from aces_bench.reports.standin import STAND_IN_MARK, stand_in_text
from aces_bench.reports.style import (
    BASELINE,
    DIVERGING,
    LIFT,
    NEGATIVE,
    WITH_SKILL,
    Size,
    draw_sizes,
    new_figure,
)

HATCH = "////"
STAND_IN_LABEL = f"hatched: {STAND_IN_MARK}"


def _errs(frame: pd.DataFrame) -> np.ndarray:
    """Asymmetric error bars from ci_lo/ci_hi; zero length where the CI is undefined."""
    lift = frame["lift"].astype(float).to_numpy()
    lo = (lift - frame["ci_lo"].astype(float).to_numpy())
    hi = (frame["ci_hi"].astype(float).to_numpy() - lift)
    return np.nan_to_num(np.vstack([lo, hi]), nan=0.0)


def _signed(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:+.2f}"


def bar_style(stand: list[str]) -> dict:
    """Bars of a stand-in series are hatched (white hatch on the series colour)."""
    return {"hatch": HATCH, "edgecolor": "white", "linewidth": 0.0} if stand else {}


def stand_in_handle(stand: list[str]) -> list[tuple]:
    """A legend entry naming the stand-ins, when there are any."""
    if not stand:
        return []
    return [(Patch(facecolor="#999999", hatch=HATCH, edgecolor="white", linewidth=0.0), STAND_IN_LABEL)]


def legend_below(fig, entries: list[tuple], size: Size, ncols: int | None = None) -> None:
    """One legend under the axes, outside every data area."""
    if not entries:
        return
    handles, labels = zip(*entries, strict=True)
    if size.column:  # a column is 3.3 in: two entries side by side only when both are short
        n = 2 if len(entries) % 2 == 0 and max(len(str(x)) for x in labels) <= 18 else 1
    else:
        n = ncols or min(len(entries), 3)
    fig.legend(list(handles), list(labels), loc="outside lower center", ncols=n, handlelength=1.6,
               columnspacing=1.0)


def method_text(table: pd.DataFrame) -> str:
    """The interval methods behind a table's rows, named once."""
    methods = sorted({str(m) for m in table.get("ci_method", pd.Series(dtype=object)).dropna()})
    if not methods:
        return "no interval (one pair, or no variation observed)"
    if len(methods) == 1:
        return methods[0]
    return "per row, clustered by case (t, cases - 1 df)"


def set_caption(description: str, stand: list[str]) -> str:
    text = f"Set: {description}."
    if stand:
        text += f" {stand_in_text(stand).capitalize()}."
    return text


def _lift_bars(ax, y, table: pd.DataFrame, stand: list[str], horizontal: bool = True) -> None:
    lift = table["lift"].astype(float).to_numpy()
    colors = [LIFT if (v or 0) >= 0 else NEGATIVE for v in np.nan_to_num(lift)]
    draw = ax.barh if horizontal else ax.bar
    draw(y, np.nan_to_num(lift), 0.6, color=colors, **bar_style(stand))
    has = table["ci_lo"].notna().to_numpy()
    if has.any():
        errs = _errs(table)[:, has]
        if horizontal:
            ax.errorbar(lift[has], y[has], xerr=errs, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)
        else:
            ax.errorbar(y[has], lift[has], yerr=errs, fmt="none", ecolor="black", elinewidth=0.8, capsize=2)


def metric_lift(inp: FigureData, out: Path) -> FigureOutcome:
    """Headline: lift per metric (and composite, outcome-only) with CIs; share of positive pairs."""
    name, title = "metric_lift", "Skill Lift per metric"
    order = [inp.outcome, *[o for o in (metric_names()) if o != inp.outcome], COMPOSITE, OUTCOME_ONLY, REWARD]
    table = inp.stats.lift_pooled.frame().set_index("outcome")
    table = table.loc[[o for o in dict.fromkeys(order) if o in table.index]]
    unscored = [o for o in table.index if not table.loc[o, "n"]]
    table = table.loc[table["n"].fillna(0) > 0]
    if table.empty:
        return FigureOutcome(name, title, skipped="no outcome has a scored pair (both conditions scored)")
    stand = inp.tables.composite_stand_in
    labels = [f"{outcome_label(o)} (n={int(n)})" for o, n in zip(table.index, table["n"], strict=True)]

    def draw(size: Size):
        rows = len(table)
        if size.column:
            fig = new_figure(size.width, 1.4 + 0.36 * rows * 2)
            ax, ax2 = fig.subplots(2, 1, height_ratios=[1, 1])
        else:
            fig = new_figure(size.width, 1.0 + 0.3 * rows)
            ax, ax2 = fig.subplots(1, 2, width_ratios=[3, 2], sharey=True)
        y = np.arange(rows)[::-1]
        _lift_bars(ax, y, table, stand)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_yticks(y, labels)
        ax.set_xlabel(f"lift, {inp.pct}% CI" if size.column else f"lift (with skill - baseline), {inp.pct}% CI")
        ax.grid(axis="x", color="#DDDDDD")
        ax.grid(axis="y", visible=False)
        share = table["share_pos"].astype(float)
        ax2.barh(y, share, 0.6, color=WITH_SKILL, **bar_style(stand))
        for yi, v in zip(y, share, strict=True):
            ax2.text(min(v, 1.0) + 0.02, yi, f"{100 * v:.0f}%", va="center")
        ax2.set_xlim(0, 1.2)
        ax2.set_xticks([0, 0.5, 1.0], ["0%", "50%", "100%"])
        if size.column:
            ax2.set_yticks(y, labels)
        ax2.set_xlabel("share of pairs with positive lift" if not size.column else "pairs with positive lift")
        ax2.grid(axis="x", color="#DDDDDD")
        ax2.grid(axis="y", visible=False)
        legend_below(fig, stand_in_handle(stand), size)
        return fig

    paths = draw_sizes(draw, out, name)
    caption = (f"Mean paired lift over scored pairs with its {inp.pct}% CI ({method_text(table)}); right (below at "
               f"column width): share of pairs with positive lift. {set_caption(inp.headline, stand)}")
    if unscored:
        caption += f" Not shown (no scored pair): {', '.join(outcome_label(o) for o in unscored)}."
    return FigureOutcome(name, title, caption, paths)


def _heatmap(inp: FigureData, table: pd.DataFrame, rows: str, cols: str, out: Path, name: str, title: str,
             empty_text: str, stand: list[str], label: str) -> dict[str, Path]:
    grid = table.pivot(index=rows, columns=cols, values="lift").astype(float)
    counts = table.pivot(index=rows, columns=cols, values="n")
    grid = grid.reindex(index=sorted(grid.index, key=natural_key), columns=sorted(grid.columns, key=natural_key))
    counts = counts.reindex(index=grid.index, columns=grid.columns)
    values = grid.to_numpy()
    finite = values[np.isfinite(values)]
    bound = max(float(np.abs(finite).max()) if finite.size else 0.05, 0.05)

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, 2.4 + 1.1 * len(grid.columns)),
                         1.3 + 0.42 * len(grid.index))
        ax = fig.subplots()
        norm = TwoSlopeNorm(vmin=-bound, vcenter=0.0, vmax=bound)
        im = ax.imshow(np.ma.masked_invalid(values), cmap=DIVERGING, norm=norm, aspect="auto")
        ax.set_xticks(range(len(grid.columns)), grid.columns, rotation=30, ha="right")
        ax.set_yticks(range(len(grid.index)), grid.index)
        ax.set_xlabel(cols)
        ax.set_ylabel(rows)
        ax.grid(False)
        ax.tick_params(length=0)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                n = counts.iat[i, j]
                text = empty_text if not np.isfinite(values[i, j]) else f"{values[i, j]:+.2f}\nn={int(n)}"
                ax.text(j, i, text, ha="center", va="center", color="black")
        if stand:  # colour cells cannot be hatched and stay legible: the mark heads the map
            ax.set_title(textwrap.fill(STAND_IN_MARK, 26 if size.column else 200), loc="left")
        cb = fig.colorbar(im, ax=ax, shrink=0.9)
        cb.set_label(label)
        return fig

    return draw_sizes(draw, out, name)


def skill_harness_heatmap(inp: FigureData, out: Path) -> FigureOutcome:
    name, title = "skill_harness_heatmap", f"{outcome_label(inp.outcome)} lift by skill and harness"
    harnesses = inp.tables.harnesses
    if len(harnesses) < 2:
        return FigureOutcome(name, title, skipped=f"only one harness ({', '.join(harnesses) or 'none'}): a skill x harness map needs two or more")
    view = inp.tables.skill_harness
    table, stand = view.table.frame(), view.stand_in
    if not table["lift"].notna().any():
        return FigureOutcome(name, title, skipped="no (skill, harness) cell has a scored pair")
    paths = _heatmap(inp, table, "skill", "harness", out, name, title, "no pair", stand,
                     f"{outcome_label(inp.outcome).lower()} lift (0 = white)")
    return FigureOutcome(name, title, "Mean paired lift per (skill, harness) cell; diverging colours centred on zero; "
                         f"n = scored pairs. {set_caption(view.description, stand)}", paths)


def paired_bars(view: LiftView, out: Path, name: str, title: str, outcome: str,
                extra_caption: str = "", min_harnesses: int = 2) -> FigureOutcome:
    """With-skill and baseline means per harness on ``outcome`` (``view``: its lift by
    harness), the paired lift on top."""
    table = view.table.frame()
    table = table.loc[table["n"] > 0].reset_index(drop=True)
    if table.empty:
        return FigureOutcome(name, title, skipped=f"no harness has a pair scored on {outcome_label(outcome).lower()}")
    if len(table) < min_harnesses:
        return FigureOutcome(name, title, skipped="fewer than two harnesses with scored pairs: the headline figure "
                             "covers one harness")
    stand = view.stand_in

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, max(4.6, 2.4 + 1.1 * len(table))), 2.6)
        ax = fig.subplots()
        x = np.arange(len(table))
        ax.set_xlim(-0.7, len(table) - 0.3)
        ax.bar(x - 0.2, table["mean_with"].astype(float), 0.4, color=WITH_SKILL, **bar_style(stand))
        ax.bar(x + 0.2, table["mean_base"].astype(float), 0.4, color=BASELINE, **bar_style(stand))
        for xi, (_, r) in zip(x, table.iterrows(), strict=True):
            for dx, v in ((-0.2, r["mean_with"]), (0.2, r["mean_base"])):
                ax.text(xi + dx, v + 0.02, f"{v:.2f}", ha="center", va="bottom")
        ticks = [f"{h}\nlift {_signed(r)}, n={int(n)}" for h, r, n in zip(table["harness"], table["lift"], table["n"],
                                                                         strict=True)]
        ax.set_xticks(x, ticks)
        ax.set_ylim(0, 1.15)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        ax.set_ylabel(f"mean {outcome_label(outcome).lower()}")
        entries = [(Patch(color=WITH_SKILL), "with skill"), (Patch(color=BASELINE), "baseline"),
                   *stand_in_handle(stand)]
        legend_below(fig, entries, size, ncols=2 if size.column else 3)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, "Means over each harness's scored pairs (the value above each bar); under "
                         f"each harness its paired lift and n. {extra_caption}{set_caption(view.description, stand)}", paths)


def harness_paired_bars(inp: FigureData, out: Path) -> FigureOutcome:
    return paired_bars(inp.tables.harness_outcome, out, "harness_paired_bars",
                       f"{outcome_label(inp.outcome)}: with skill vs baseline per harness", inp.outcome)


def harness_model_cells(inp: FigureData, out: Path) -> FigureOutcome:
    name, title = "harness_model_cells", f"{outcome_label(inp.outcome)} lift per harness-model cell"
    cells = inp.tables.cells
    table = cells.table.frame()
    table = table.loc[table["n"] > 0].reset_index(drop=True)
    if len(table) < 2:
        return FigureOutcome(name, title, skipped="fewer than two harness-model cells with scored pairs")
    stand = cells.stand_in
    def draw(size: Size):
        sep = "\n" if size.column else " / "
        labels = [f"{h}{sep}{m} (n={int(n)})" for h, m, n in zip(table["harness"], table["model"], table["n"],
                                                                strict=True)]
        fig = new_figure(size.width, 0.9 + (0.42 if size.column else 0.3) * len(table))
        ax = fig.subplots()
        y = np.arange(len(table))[::-1]
        _lift_bars(ax, y, table, stand)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_yticks(y, labels)
        ax.grid(axis="x", color="#DDDDDD")
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(f"lift, {inp.pct}% CI" if size.column else
                      f"{outcome_label(inp.outcome).lower()} lift, {inp.pct}% CI")
        legend_below(fig, stand_in_handle(stand), size)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"Paired lift per (harness, model) cell with its {inp.pct}% CI "
                         f"({method_text(table)}). {set_caption(cells.description, stand)}", paths)


def model_sweep(inp: FigureData, out: Path) -> FigureOutcome:
    name, title = "model_sweep", f"Same-harness model sweep ({outcome_label(inp.outcome).lower()})"
    s = inp.tables.model_sweep
    table = s.table.frame()
    table = table.loc[table["n"] > 0]
    swept = [h for h, part in table.groupby("harness", sort=True) if len(part) >= 2]
    if not swept:
        return FigureOutcome(name, title, skipped="no harness was run with two or more models")
    stand = s.stand_in
    marker = {"markerfacecolor": "white"} if stand else {}

    def draw(size: Size):
        n = len(swept)
        fig = new_figure(size.width, 2.6 if not size.column or n == 1 else 2.2 * n)
        grid = fig.subplots(1, n, squeeze=False) if not size.column else fig.subplots(n, 1, squeeze=False)
        axes = list(np.ravel(grid))
        for ax, h in zip(axes, swept, strict=True):
            part = table.loc[table["harness"] == h].sort_values(["mean_base", "model"], kind="stable")
            x = np.arange(len(part))
            ax.plot(x, part["mean_base"].astype(float), marker="o", color=BASELINE, **marker)
            ax.plot(x, part["mean_with"].astype(float), marker="s", color=WITH_SKILL, **marker)
            ax.plot(x, part["lift"].astype(float), marker="^", color=LIFT, **marker)
            ax.axhline(0, color="black", linewidth=0.6)
            ax.set_xticks(x, part["model"], rotation=20, ha="right")
            ax.set_title(h, loc="left")
            ax.set_ylabel(outcome_label(inp.outcome).lower())
        entries = [(Line2D([], [], marker="o", color=BASELINE, **marker), "baseline"),
                   (Line2D([], [], marker="s", color=WITH_SKILL, **marker), "with skill"),
                   (Line2D([], [], marker="^", color=LIFT, **marker), "lift")]
        if stand:
            entries.append((Line2D([], [], marker="o", color="#777777", markerfacecolor="white", linestyle="none"),
                            f"hollow: {STAND_IN_MARK}"))
        legend_below(fig, entries, size, ncols=3)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, "Models ordered by baseline score; a stronger baseline leaves less room for "
                         f"lift. {set_caption(s.description, stand)}", paths)


def log_ticks(ax, values: list[int]) -> None:
    """A log axis labelled once at each value, nothing else (no minor labels to overprint)."""
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(values))
    ax.set_xticks(values, [str(v) for v in values])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    lo, hi = min(values), max(values)
    ax.set_xlim(lo / 1.35, hi * 1.35)


def plot_stress_lift(ax, x: list[int], table: pd.DataFrame, **style) -> None:
    """Routing stress's lift per level of visible skills, with its interval where it has one."""
    has = table["ci_lo"].notna().to_numpy()
    ax.plot(x, table["lift"].astype(float), marker="o", color=LIFT, **style)
    if has.any():
        ax.errorbar(np.array(x)[has], table["lift"].astype(float)[has], yerr=_errs(table)[:, has], fmt="none",
                    ecolor=LIFT, capsize=3)


def plot_stress_wall(ax, wall: pd.Series, title: str, **style) -> None:
    """Routing stress's mean with-skill wall time per level of visible skills, on its own panel."""
    if len(wall):
        ax.plot(wall.index.astype(int), wall.to_numpy(float), marker="s", color=WITH_SKILL, **style)
        log_ticks(ax, sorted(wall.index.astype(int).tolist()))
        ax.set_ylim(0, float(wall.max()) * 1.15 or 1.0)
    else:
        ax.text(0.5, 0.5, "wall time not recorded", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("skills the agent saw (log scale)")
    ax.set_ylabel("mean with-skill wall time (s)")
    ax.set_title(title, loc="left")


def stress_axes(fig, size: Size):
    return fig.subplots(1, 2) if not size.column else fig.subplots(2, 1)


def routing_stress(inp: FigureData, out: Path) -> FigureOutcome:
    name, title = "routing_stress", "Routing stress: lift and wall time vs visible skills"
    stress = inp.tables.stress
    if stress is None:
        return FigureOutcome(name, title, skipped="the trials table has no n_visible_skills column")
    s, wall = stress.lift, pd.Series(stress.wall, dtype=float)
    table = s.table.frame()
    if len(table) < 2:
        levels = table["visible"].tolist()
        return FigureOutcome(name, title, skipped="every with-skill trial saw the same number of skills "
                             f"({levels[0] if levels else 'none'})")
    stand = s.stand_in
    marker = {"markerfacecolor": "white"} if stand else {}
    x = table["visible"].astype(int).tolist()

    def draw(size: Size):
        fig = new_figure(size.width, 2.5 if not size.column else 4.2)
        ax, ax2 = stress_axes(fig, size)
        plot_stress_lift(ax, x, table, **marker)
        ax.axhline(0, color="black", linewidth=0.6)
        log_ticks(ax, x)
        ax.set_xlabel("skills the agent saw (log scale)")
        ax.set_ylabel(f"{outcome_label(inp.outcome).lower()} lift, {inp.pct}% CI")
        ax.set_title("(a) lift", loc="left")
        plot_stress_wall(ax2, wall, "(b) wall time", **marker)
        if stand:
            legend_below(fig, [(Line2D([], [], marker="o", color=LIFT, markerfacecolor="white"),
                                f"hollow: {STAND_IN_MARK}")], size)
        return fig

    paths = draw_sizes(draw, out, name)
    note = "" if len(wall) else " Wall time was not recorded."
    return FigureOutcome(name, title, f"(a) Paired {outcome_label(inp.outcome).lower()} lift per number of skills the "
                         f"agent saw, each level computed as the headline is ({method_text(table)}); (b) mean "
                         f"with-skill wall time, on its own scale. {set_caption(s.description, stand)}" + note, paths)


GATE = 70


def _score_range(x: np.ndarray) -> tuple[float, float]:
    """An x range around the scores (at least 10 points wide, inside 0-100 plus a margin for labels)."""
    lo, hi = float(x.min()), float(x.max())
    pad = max(2.0, 0.1 * (hi - lo), (10.0 - (hi - lo)) / 2)
    return max(lo - pad, 0.0), min(hi + pad, 101.0)


def _number_points(ax, x: np.ndarray, y: np.ndarray, labels: list[str]) -> list[tuple]:
    """Number the points (points at one spot share a label, e.g. ``2,3``); the numbers'
    names become legend entries beside the axes, so names never overlap."""
    order = sorted(range(len(labels)), key=lambda i: labels[i])
    number = {i: k + 1 for k, i in enumerate(order)}
    spots: dict[tuple[float, float], list[int]] = {}
    for i in order:
        spots.setdefault((round(float(x[i]), 2), round(float(y[i]), 4)), []).append(number[i])
    for (px, py), nums in spots.items():
        ax.annotate(",".join(map(str, nums)), (px, py), xytext=(4, 3), textcoords="offset points")
    blank = Line2D([], [], linestyle="none")
    return [(blank, f"{number[i]}  {labels[i]} ({x[i]:.1f}, {y[i]:+.3f})") for i in order]


def _corr_text(c) -> str:
    if c is None or c.rho is None:
        return f"Spearman rho undefined ({c.note if c is not None and c.note else 'no data'}), n = {c.n if c else 0}"
    ci = (f"{int(c.level * 100)}% CI [{c.ci_lo:+.2f}, {c.ci_hi:+.2f}]" if c.ci_lo is not None
          else "no CI (Fisher-z needs n >= 4)")
    return f"Spearman rho = {c.rho:+.2f}, {ci}, n = {c.n}"


def static_vs_live(inp: FigureData, out: Path) -> FigureOutcome:
    """Tier 1 structural score against live lift, one point per skill."""
    name, title = "static_vs_live", f"Structural score vs {outcome_label(inp.outcome).lower()} lift"
    sec = inp.static
    if sec is None or sec.status != "ran" or inp.stats.static_by_skill is None:
        return FigureOutcome(name, title, skipped=(sec.reason if sec is not None and sec.reason else "no static scan ran"))
    table = inp.stats.static_by_skill.frame().dropna(subset=["static", "lift"])
    if table.empty:
        return FigureOutcome(name, title, skipped="no skill has both a structural score and a scored pair")
    stand = inp.tables.stand_in
    x, y = table["static"].astype(float).to_numpy(), table["lift"].astype(float).to_numpy()

    def draw(size: Size):
        fig = new_figure(size.width, 2.6 if not size.column else 3.0 + 0.12 * len(table))
        ax = fig.subplots()
        ax.margins(y=0.2)
        ax.scatter(x, y, s=30, color="white" if stand else WITH_SKILL, edgecolor=WITH_SKILL if stand else "black",
                   linewidth=0.8, zorder=3)
        entries = _number_points(ax, x, y, [str(v) for v in table["skill"]])
        ax.axhline(0, color="black", linewidth=0.6)
        lo, hi = _score_range(x)
        ax.set_xlim(lo, hi)
        if lo < GATE < hi:
            ax.axvline(GATE, color=NEGATIVE, linewidth=0.8, linestyle=":")
            entries.append((Line2D([], [], color=NEGATIVE, linestyle=":"), f"default gate ({GATE})"))
        if stand:
            entries.append((Line2D([], [], marker="o", color=WITH_SKILL, markerfacecolor="white", linestyle="none"),
                            f"hollow: {STAND_IN_MARK}"))
        ax.set_xlabel("Tier 1 structural score (0-100)")
        ax.set_ylabel(f"mean {outcome_label(inp.outcome).lower()} lift")
        ax.grid(axis="x", color="#DDDDDD")
        ax.set_title(textwrap.fill(_corr_text(sec.tier1), 40 if size.column else 60), loc="left")
        if size.column:
            legend_below(fig, entries, size, ncols=1)
        else:
            fig.legend(*zip(*entries, strict=True), loc="outside right upper", handlelength=1.0)
        return fig

    paths = draw_sizes(draw, out, name)
    caption = f"One point per target skill. {_corr_text(sec.tier1)}. {set_caption(inp.headline, stand)}"
    if sec.caveat and sec.tier1 is not None and sec.tier1.rho is not None:  # an undefined rho already says why
        caption += f" Caveat: {sec.caveat}."
    return FigureOutcome(name, title, caption, paths)


# The report's figures, in report order: ``draw(inp, out_dir) -> FigureOutcome`` each. A
# plugin adds one with ``FIGURES.register(name, "my_plugin.figure:draw")`` (docs/extending.md).
FIGURES: Registry[Callable[[FigureData, Path], FigureOutcome]] = Registry(
    "report figure", where="report figures", ordered=True)
for _figure in (metric_lift, skill_harness_heatmap, harness_paired_bars, harness_model_cells, model_sweep,
                routing_stress, static_vs_live):
    FIGURES.register(_figure.__name__, _figure)


def draw_all(inp: FigureData, out_dir: Path) -> list[FigureOutcome]:
    """Every figure, in report order; skipped ones carry their reason."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [fn(inp, out_dir) for _, fn in FIGURES.items()]


def integer_ticks(axis) -> None:
    """Counts get whole-number ticks."""
    axis.set_major_locator(MaxNLocator(integer=True))


__all__ = ["FIGURES", "OUTCOME", "FigureData", "FigureOutcome", "draw_all"]
