"""The ACES paper's figures and tables, drawn from a study's own results with the
paper's reported values beside them (``aces_paper_reported.json``, copied verbatim
from the paper's text, tables and appendices).

Every figure here marks the paper's value with one labelled overlay ("ACES paper,
reported") where the paper gives one, and says so in the caption where it does not.
Every number names its analysis set (``reports/analysis.py``: the headline is the
primary arm, positive cases; routing stress and the model slice are their own arms) and
its stand-ins (``reports/standin.py``): a value produced with the reference agent, the
heuristic judge or an offline model is marked "stand-in: not comparable with the paper"
in the table, the figures (hatched or hollow series) and the LaTeX captions. The
side-by-side table lists each reported quantity next to the study's own; a study value
the results cannot give is None ("n/a"), never 0. The static-scan figures and tables of
the page come from one scan, with the study's rule profile, named. Nothing is fitted to
the paper: its values are only drawn and tabulated.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from pydantic import BaseModel

from aces_bench.agents.profiles import paper_harness  # the paper's harness labels (HarnessProfile.paper_label)
from aces_bench.core.outcomes import COMPOSITE, FINAL_PASS, OUTCOME_ONLY, REWARD
from aces_bench.records.summary import SideBySide
from aces_bench.records.trials import positive_cases
from aces_bench.reports.analysis import STRESS_ARM
from aces_bench.reports.figure_data import ArmSet, FigureData, FigureOutcome
from aces_bench.reports.figures import (
    _errs,
    _heatmap,
    _lift_bars,
    bar_style,
    integer_ticks,
    legend_below,
    log_ticks,
    method_text,
    model_sweep,
    paired_bars,
    plot_stress_lift,
    plot_stress_wall,
    set_caption,
    skill_harness_heatmap,
    static_vs_live,
    stress_axes,
    stress_wall,
)
from aces_bench.reports.inventory import InventoryItem
from aces_bench.reports.labels import outcome_label
from aces_bench.reports.reported import REPORTED_FILE, load_reported  # noqa: F401 (the paper page's names)
from aces_bench.reports.standin import STAND_IN_MARK, stand_in_text
from aces_bench.reports.style import LIFT, OKABE_ITO, WITH_SKILL, Size, draw_sizes, new_figure

REPORTED_LABEL = "ACES paper, reported"
REPORTED_COLOR = OKABE_ITO.get("black", "#000000")
# Evidence inventory: the report's inventory item -> the paper's key.
INVENTORY_KEYS = {
    "harnesses": "primary_harnesses", "skill-agent cells": "skill_agent_cells",
    "cells with scored pairs": "cells_with_scored_pairs", "scored paired cases": "scored_paired_cases",
    "condition runs (trials)": "reward_rows", "saved ATIF trajectories": "saved_atif_trajectories",
    "recorded agent steps": "recorded_agent_steps", "tool calls": "tool_calls",
    "behavior observations": "behavior_observations",
}
UNCATEGORISED = "uncategorised"
PAPER_STATISTIC = "composite"  # the paper's lifts are composite lifts


def _f(x: Any) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _mark(ax, x, y, *, horizontal: bool = False) -> None:
    """The reported value as an open diamond."""
    kw = {"marker": "D", "s": 30, "facecolor": "white", "edgecolor": REPORTED_COLOR, "linewidth": 1.2, "zorder": 5}
    ax.scatter(y if horizontal else x, x if horizontal else y, **kw)


def _reported_handle() -> tuple:
    return (Line2D([], [], marker="D", markersize=5, markerfacecolor="white", markeredgecolor=REPORTED_COLOR,
                   linestyle="none"), REPORTED_LABEL)


def _study_handle(stand: list[str], color: str = WITH_SKILL) -> tuple:
    label = "this study" + (f" (hatched: {STAND_IN_MARK})" if stand else "")
    return (Patch(facecolor=color, **bar_style(stand)), label)


def _pooled(inp: FigureData) -> pd.DataFrame:
    return inp.stats.lift_pooled.frame().set_index("outcome")


def paper_metric_lift(inp: FigureData, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_metric_lift", "Metric lift: this study vs the ACES paper"
    paper = {**reported["headline_live"].get("metric_lift", {}),
             COMPOSITE: reported["headline_live"].get("composite_lift_mean"),
             OUTCOME_ONLY: reported["headline_live"].get("outcome_only_lift")}
    table = _pooled(inp)
    order = [o for o in ("skill_execution", "behavior_check", "skill_efficiency", "accuracy", "goal_accuracy",
                         "security", COMPOSITE, OUTCOME_ONLY) if o in table.index or o in paper]
    rows = table.reindex(order)
    stand = inp.stand_in(outcome=COMPOSITE)
    labels = [f"{outcome_label(o)} (n={int(n)})" if n == n and n else f"{outcome_label(o)} (no pair)"
              for o, n in zip(order, rows["n"], strict=True)]

    def draw(size: Size):
        fig = new_figure(size.width, 1.0 + 0.28 * len(order))
        ax = fig.subplots()
        y = np.arange(len(order))[::-1]
        _lift_bars(ax, y, rows, stand)
        ys = [yi for yi, o in zip(y, order, strict=True) if _f(paper.get(o)) is not None]
        xs = [_f(paper[o]) for o in order if _f(paper.get(o)) is not None]
        if xs:
            _mark(ax, np.array(ys), np.array(xs), horizontal=True)
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_yticks(y, labels)
        ax.set_xlabel(f"lift, {inp.pct}% CI" if size.column else f"lift (with skill - baseline), {inp.pct}% CI")
        ax.grid(axis="x", color="#DDDDDD")
        ax.grid(axis="y", visible=False)
        legend_below(fig, [_study_handle(stand, LIFT), _reported_handle()], size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"Bars: this study's mean paired lift with its {inp.pct}% CI "
                         f"({method_text(rows.dropna(subset=['lift']))}); open diamonds: the paper's reported lift "
                         f"({REPORTED_LABEL}). {set_caption(inp.headline, stand)}", paths)


def paper_harness_lift(inp: FigureData, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_harness_lift", "Composite lift per harness: this study vs the ACES paper"
    table = inp.lift(("harness",), outcomes=(COMPOSITE,))
    table = table.loc[table["n"] > 0].set_index("harness")
    paper = {paper_harness(r["harness"]): _f(r.get("lift")) for r in reported.get("by_harness", [])}
    names = sorted(set(table.index) | set(paper))
    if table.empty:
        return FigureOutcome(name, title, skipped="no harness has a scored composite pair")
    stand = inp.stand_in(outcome=COMPOSITE)
    rows = table.reindex(names)

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, 2.2 + 0.9 * len(names)), 2.6)
        ax = fig.subplots()
        x = np.arange(len(names))
        lift = rows["lift"].astype(float).to_numpy()
        ax.bar(x, np.nan_to_num(lift), 0.6, color=WITH_SKILL, **bar_style(stand))
        has = rows["ci_lo"].notna().to_numpy()
        if has.any():
            ax.errorbar(x[has], lift[has], yerr=_errs(rows)[:, has], fmt="none", ecolor="black", elinewidth=0.8,
                        capsize=2)
        px = [i for i, h in enumerate(names) if paper.get(h) is not None]
        if px:
            _mark(ax, np.array(px), np.array([paper[names[i]] for i in px]))
        ax.axhline(0, color="black", linewidth=0.6)
        ticks = [h if np.isfinite(v) else f"{h}\n(not run)" for h, v in zip(names, lift, strict=True)]
        ax.set_xticks(x, ticks, rotation=30 if size.column else 0, ha="right" if size.column else "center")
        ax.set_ylabel(f"composite lift, {inp.pct}% CI")
        legend_below(fig, [_study_handle(stand), _reported_handle()], size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"Bars: this study's composite lift per harness with its {inp.pct}% CI "
                         f"({method_text(table)}); open diamonds: {REPORTED_LABEL} (by_harness). "
                         f"{set_caption(inp.headline, stand)}", paths)


def paper_harness_reward(inp: FigureData, reported: dict, out: Path) -> FigureOutcome:
    """The paper's Fig. 10(a): mean verifier reward with and without the skill, per harness."""
    return paired_bars(inp, out, "paper_harness_reward", "Verifier reward with and without the skill per harness "
                       "(the paper's Fig. 10(a))", REWARD, inp.headline,
                       extra_caption="The paper gives no per-harness reward values in its text, so there is no "
                       "reported overlay. ", min_harnesses=1)


def paper_harness_model_heatmap(inp: FigureData, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_harness_model_heatmap", f"{outcome_label(inp.outcome)} lift by harness and model"
    cells = inp.sets.cells if inp.sets is not None else inp.headline
    table = inp.lift(("harness", "model"), pairs=cells.pairs)
    if table.empty or not (table["n"] > 0).any():
        return FigureOutcome(name, title, skipped="no (harness, model) cell has a scored pair")
    stand = inp.stand_in(cells.trials)
    paths = _heatmap(inp, table, "harness", "model", out, name, title, "not run", stand,
                     f"{outcome_label(inp.outcome).lower()} lift")
    return FigureOutcome(name, title, "Mean paired lift per (harness, model); n = scored pairs. The paper reports no "
                         f"per-cell values, so no reported overlay. {set_caption(cells, stand)}", paths)


def _stress_set(inp: FigureData) -> ArmSet:
    return inp.sets.or_headline(STRESS_ARM) if inp.sets is not None else inp.headline


def paper_routing_stress(inp: FigureData, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_routing_stress", "Routing stress: composite lift and wall time vs visible skills"
    rs = reported.get("routing_stress", {})
    s = _stress_set(inp)
    if "n_visible_skills_with" not in s.pairs.columns:
        return FigureOutcome(name, title, skipped="the trials table has no n_visible_skills column")
    table = inp.stress_table(s, COMPOSITE)
    if len(table) < 2:
        return FigureOutcome(name, title, skipped="every with-skill trial saw the same number of skills")
    wall = stress_wall(s)
    stand = inp.stand_in(s.trials, COMPOSITE)
    hollow = {"markerfacecolor": "white"} if stand else {}
    x = table["visible"].astype(int).tolist()
    band = rs.get("lift_range_1_to_20")
    paper_wall = {int(k): _f(v) for k, v in (rs.get("mean_wall_seconds") or {}).items()}

    def draw(size: Size):
        fig = new_figure(size.width, 2.5 if not size.column else 4.3)
        ax, ax2 = stress_axes(fig, size)
        plot_stress_lift(ax, x, table, **hollow)
        entries = [(Line2D([], [], marker="o", color=LIFT, **hollow),
                    "this study" + (f" (hollow: {STAND_IN_MARK})" if stand else ""))]
        if band and len(band) == 2:
            ax.fill_between([1, 20], [band[0]] * 2, [band[1]] * 2, color=REPORTED_COLOR, alpha=0.2, linewidth=0)
            entries.append((Patch(color=REPORTED_COLOR, alpha=0.2), f"{REPORTED_LABEL}: lift range, 1-20 skills"))
        ax.axhline(0, color="black", linewidth=0.6)
        log_ticks(ax, x)
        ax.set_xlim(min(0.8, x[0] / 1.35), x[-1] * 1.35)
        ax.set_xlabel("skills the agent saw (log scale)")
        ax.set_ylabel(f"composite lift, {inp.pct}% CI")
        ax.set_title("(a) lift", loc="left")
        plot_stress_wall(ax2, wall, "(b) this study's wall time", **hollow)
        legend_below(fig, entries, size, ncols=1 if size.column else 2)
        return fig

    paths = draw_sizes(draw, out, name)
    walls = ", ".join(f"{v:g} s at {k}" for k, v in sorted(paper_wall.items()) if v is not None)
    caption = (f"(a) Composite lift (the paper's statistic) per number of skills the agent saw (target, decoys and "
               f"any skills of the harness's own it kept), each level computed as the headline is "
               f"({method_text(table)}); shaded: {REPORTED_LABEL} lift range for 1-20 skills. (b) This study's mean "
               f"with-skill wall time on its own scale")
    caption += f"; {REPORTED_LABEL}: {walls} (another agent and machine, not drawn on this scale)." if walls else "."
    caption += f" {set_caption(s, stand)}" + ("" if len(wall) else " Wall time was not recorded.")
    return FigureOutcome(name, title, caption, paths)


def paper_scan_histogram(scan: ScanView | None, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_scan_histogram", "Tier 1 structural scores of the study's skills"
    ss = reported.get("static_scan", {}).get("structural_score", {})
    if scan is None or not scan.scores:
        return FigureOutcome(name, title, skipped="no target skill was scanned")
    scores = scan.scores
    gate = reported.get("static_scan", {}).get("default_gate", 70)

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, 5.0), 2.4)
        ax = fig.subplots()
        ax.hist(scores, bins=np.arange(0, 102, 2), color=WITH_SKILL, edgecolor="white")
        ax.axvline(gate, color="black", linestyle=":", linewidth=0.8)
        entries = [(Patch(color=WITH_SKILL), f"this study ({scan.profile} profile)"),
                   (Line2D([], [], color="black", linestyle=":"), f"gate {gate}")]
        if _f(ss.get("mean")) is not None:
            ax.axvline(ss["mean"], color=REPORTED_COLOR, linewidth=1.2)
            entries.append((Line2D([], [], color=REPORTED_COLOR), f"{REPORTED_LABEL}: mean {ss['mean']:g}"))
        if ss.get("min") is not None and ss.get("max") is not None:
            ax.axvspan(ss["min"], ss["max"], color=REPORTED_COLOR, alpha=0.08)
            entries.append((Patch(color=REPORTED_COLOR, alpha=0.08), f"{REPORTED_LABEL}: range"))
        ax.set_xlim(max(0, min(min(scores), ss.get("min", 100), gate) - 5), 100)
        integer_ticks(ax.yaxis)
        ax.set_xlabel("structural score (0-100)")
        ax.set_ylabel("skills")
        legend_below(fig, entries, size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"Histogram of this study's Tier 1 scores (rule profile: {scan.profile}; the "
                         f"same scan as the static-scan rows of the table); line and band: {REPORTED_LABEL} mean and "
                         f"range over its {reported.get('static_scan', {}).get('n_skills', '?')} skills.", paths)


def paper_top_violations(scan: ScanView | None, out: Path) -> FigureOutcome:
    name, title = "paper_top_violations", "Top rule violations: share of skills"
    rows = scan.violations if scan is not None else []
    if not rows:
        return FigureOutcome(name, title, skipped="no target skill was scanned")
    labels = [r["reported_label"] + ("" if r["ours"] is not None else " (not in profile)") for r in rows]

    def draw(size: Size):
        import textwrap

        wrapped = [textwrap.fill(x, 20 if size.column else 60) for x in labels]
        fig = new_figure(size.width, 1.0 + (0.42 if size.column else 0.3) * len(rows))
        ax = fig.subplots()
        y = np.arange(len(rows))[::-1]
        ours = np.array([r["ours"] if r["ours"] is not None else np.nan for r in rows], dtype=float)
        ax.barh(y, np.nan_to_num(ours), 0.6, color=WITH_SKILL)
        paper = np.array([r["reported"] for r in rows], dtype=float)
        for yi, v, pv in zip(y, ours, paper, strict=True):
            if np.isfinite(v):
                ax.text(max(v, np.nan_to_num(pv)) + 0.04, yi, f"{100 * v:.0f}%", va="center")
        _mark(ax, y, paper, horizontal=True)
        ax.set_yticks(y, wrapped)
        ax.set_xlim(0, 1.3)
        ax.set_xticks([0, 0.5, 1.0], ["0%", "50%", "100%"])
        ax.set_xlabel("share of skills violating the rule")
        ax.grid(axis="y", visible=False)
        legend_below(fig, [(Patch(color=WITH_SKILL), f"this study ({scan.profile} profile)"), _reported_handle()],
                     size, ncols=2)
        return fig

    paths = draw_sizes(draw, out, name)
    missing = [r["reported_label"] for r in rows if r["ours"] is None]
    note = (f" Not checked by the {scan.profile} profile (no bar): {', '.join(missing)}." if missing else "")
    return FigureOutcome(name, title, f"The rules the paper names; bars: this study's skills (rule profile: "
                         f"{scan.profile}), open diamonds: {REPORTED_LABEL}.{note}", paths)


def paper_structural_vs_judge(inp: FigureData, reported: dict, out: Path) -> FigureOutcome:
    """The paper's Fig. 1(b): Tier 1 structural score against the Tier 2 LLM-judge score."""
    name, title = "paper_structural_vs_judge", "Structural vs LLM-judge scores (the paper's Fig. 1(b))"
    sec = inp.static
    if sec is None or sec.status != "ran":
        return FigureOutcome(name, title, skipped=f"no static scan ran ({sec.reason if sec is not None else 'none'})")
    both = [k for k in sec.skills if k.structural is not None and k.rubric is not None]
    if not both:
        return FigureOutcome(name, title, skipped=f"no Tier 2 (LLM-judge) score: {sec.tier2_status}")
    x = np.array([k.structural for k in both], dtype=float)
    y = np.array([k.rubric for k in both], dtype=float)
    corr = inp.spearman(x, y, x_name="structural", y_name="rubric")
    paper = reported.get("static_scan", {}).get("structural_vs_llm_judge", {})

    def draw(size: Size):
        fig = new_figure(size.width if size.column else min(size.width, 4.0), 2.8)
        ax = fig.subplots()
        ax.scatter(x, y, s=24, color=WITH_SKILL, edgecolor="black", linewidth=0.5)
        ax.set_xlabel("Tier 1 structural score (0-100)")
        ax.set_ylabel("Tier 2 LLM-judge score (0-100)")
        rho = "undefined" if corr.rho is None else f"{corr.rho:+.2f}"
        ax.set_title(f"Spearman rho {rho}, n = {corr.n}; paper: {paper.get('spearman', 'n/a')}", loc="left")
        return fig

    paths = draw_sizes(draw, out, name)
    return FigureOutcome(name, title, f"One point per scanned target skill (rule profile: {sec.profile}; judge: "
                         f"{sec.tier2_status}). {REPORTED_LABEL}: Spearman {paper.get('spearman', 'n/a')}, Pearson "
                         f"{paper.get('pearson', 'n/a')} over its corpus.", paths)


class ScanView(BaseModel):
    """The one Tier 1 scan the page's static figures and tables come from."""

    profile: str
    scores: list[float]
    comparison: dict[str, Any]
    categories: list[dict[str, Any]]

    @property
    def violations(self) -> list[dict]:
        return self.comparison.get("violation_rows", [])


def _row(section: str, quantity: str, reported: Any, study: Any, n: Any = None, note: str = "",
         analysis_set: str = "", stand: list[str] | None = None) -> SideBySide:
    return SideBySide(section=section, quantity=quantity, reported=_f(reported), study=_f(study),
                      n=int(n) if _f(n) is not None else None, note=note, analysis_set=analysis_set,
                      stand_in=stand_in_text(stand or []) if _f(study) is not None else "")


def side_by_side(inp: FigureData, reported: dict, items: list[InventoryItem], scan: ScanView | None
                 ) -> list[SideBySide]:
    """Every reported quantity this study can be set against, with the study's value (None: not available)."""
    h, rows = reported["headline_live"], []
    pooled = _pooled(inp)
    head = inp.headline.description
    stand = inp.stand_in(outcome=COMPOSITE)

    def pooled_value(outcome: str, col: str):
        return pooled.loc[outcome, col] if outcome in pooled.index else None

    def hrow(quantity, paper, study, n=None, note="", outcome=COMPOSITE):
        return _row("headline", quantity, paper, study, n, note, head, inp.stand_in(outcome=outcome))

    n_comp = pooled_value(COMPOSITE, "n")
    rows += [
        hrow("composite lift", h.get("composite_lift_mean"), pooled_value(COMPOSITE, "lift"), n_comp),
        hrow("composite lift CI low", (h.get("composite_lift_ci95_normal") or [None])[0],
             pooled_value(COMPOSITE, "ci_lo"), n_comp,
             f"paper: normal interval over paired cases; this study: "
             f"{pooled_value(COMPOSITE, 'ci_method') or pooled_value(COMPOSITE, 'ci_note') or 'no interval'}"),
        hrow("composite lift CI high", (h.get("composite_lift_ci95_normal") or [None, None])[1],
             pooled_value(COMPOSITE, "ci_hi"), n_comp),
        hrow("composite with skill", h.get("composite_with_skill"), pooled_value(COMPOSITE, "mean_with"), n_comp),
        hrow("composite baseline", h.get("composite_baseline"), pooled_value(COMPOSITE, "mean_base"), n_comp),
        hrow("composite median lift", h.get("composite_lift_median"), pooled_value(COMPOSITE, "median"), n_comp),
        hrow("share of cases with positive lift", h.get("composite_positive_share"),
             pooled_value(COMPOSITE, "share_pos"), n_comp),
        hrow("outcome-only lift", h.get("outcome_only_lift"), pooled_value(OUTCOME_ONLY, "lift"),
             pooled_value(OUTCOME_ONLY, "n"), outcome=OUTCOME_ONLY),
    ]
    for metric, value in (h.get("metric_lift") or {}).items():
        rows.append(_row("metric lift", outcome_label(metric), value, pooled_value(metric, "lift"),
                         pooled_value(metric, "n"), analysis_set=head, stand=inp.stand_in(outcome=metric)))
    boot = inp.stats.bootstrap.frame()
    for clustering, key in (("skill", "cluster_bootstrap_ci95_over_skills"), ("cell", "cluster_bootstrap_ci95_over_cells")):
        part = boot.loc[(boot["clustering"] == clustering) & (boot["outcome"] == COMPOSITE)] if len(boot) else boot
        lo, hi = (part["ci_lo"].iloc[0], part["ci_hi"].iloc[0]) if len(part) else (None, None)
        paper = h.get(key) or [None, None]
        rows += [hrow(f"bootstrap CI over {clustering}s, low", paper[0], lo),
                 hrow(f"bootstrap CI over {clustering}s, high", paper[1], hi)]
    sd = inp.stats.within_cell_sd.frame()
    sd = sd.loc[(sd["outcome"] == COMPOSITE) & (sd["condition"] == "lift")] if len(sd) else sd
    sdv = sd["sd_between_attempts"].dropna() if len(sd) else pd.Series(dtype=float)
    paper_sd = h.get("within_cell_lift_sd") or {}
    note = "" if len(sdv) else "no cell ran more than one attempt"
    rows += [_row("repeated cells", "within-cell lift SD, median", paper_sd.get("median"),
                  sdv.median() if len(sdv) else None, len(sdv), note, head, stand),
             _row("repeated cells", "within-cell lift SD, mean", paper_sd.get("mean"), sdv.mean() if len(sdv) else None,
                  len(sdv), note, head, stand)]
    by_h = inp.lift(("harness",), outcomes=(COMPOSITE,)).set_index("harness")
    for r in reported.get("by_harness", []):
        ours = paper_harness(r["harness"])
        got = by_h.loc[ours] if ours in by_h.index else None
        trials = inp.trials.loc[inp.trials["harness"].astype(str) == ours]
        rows.append(_row("by harness", f"{ours} composite lift", r.get("lift"),
                         got["lift"] if got is not None else None, got["n"] if got is not None else None,
                         "" if got is not None else "harness not in this study", head,
                         inp.stand_in(trials, COMPOSITE)))
    # The harnesses of this study the paper did not run: the figure draws them, the table lists them.
    listed = {paper_harness(r["harness"]) for r in reported.get("by_harness", [])}
    for ours in sorted(h for h in by_h.index if h not in listed and by_h.loc[h, "n"]):
        got = by_h.loc[ours]
        trials = inp.trials.loc[inp.trials["harness"].astype(str) == ours]
        rows.append(_row("by harness", f"{ours} composite lift", None, got["lift"], got["n"], "not in the paper",
                         head, inp.stand_in(trials, COMPOSITE)))
    rows += _routing_rows(inp, reported.get("routing_stress", {}))
    sv = reported.get("static_vs_live", {})
    sec = inp.static
    t1 = sec.tier1 if sec is not None else None
    t2 = sec.tier2 if sec is not None else None
    live = f"target skills' Tier 1 ({sec.profile if sec else '?'} profile) vs their lift on the {head}"
    rows += [_row("static vs live", "Tier 1 Spearman rho", sv.get("tier1_spearman"), t1.rho if t1 else None,
                  t1.n if t1 else None, analysis_set=live, stand=inp.stand_in()),
             _row("static vs live", "Tier 2 Spearman rho", sv.get("tier2_spearman"), t2.rho if t2 else None,
                  t2.n if t2 else None, "" if t2 else (sec.tier2_status if sec is not None else "no scan"), live,
                  inp.stand_in())]
    if scan:
        scanned = f"the study's target skills, one scan ({scan.profile} profile)"
        for r in scan.comparison.get("score_rows", []):
            rows.append(_row("static scan", r["figure"], r["reported"], r["ours"], analysis_set=scanned))
        for r in scan.violations:
            rows.append(_row("top violations", r["reported_label"], r["reported"], r["ours"],
                             note="" if r["ours"] is not None else f"rule not in the {scan.profile} profile",
                             analysis_set=scanned))
        rows += _category_rows(scan, reported, scanned)
    inv = reported.get("evidence_inventory", {})
    whole = inp.sets.trials if inp.sets is not None else inp.trials
    for item in items:
        key = INVENTORY_KEYS.get(item.item)
        if key:
            rows.append(_row("evidence inventory", item.item, inv.get(key), item.count,
                             note=f"paper: {key.replace('_', ' ')}", analysis_set=item.analysis_set,
                             stand=inp.stand_in(whole)))
    rows += _missingness_rows(inp, reported.get("missingness_audit", {}))
    return rows


def _category_rows(scan: ScanView, reported: dict, scanned: str) -> list[SideBySide]:
    """The paper's Table 5 (corpus by category): n and mean per category, side by side."""
    ours = {c["category"]: c for c in scan.categories}
    paper = {c["category"]: c for c in reported.get("static_scan", {}).get("by_category", [])}
    out = []
    for cat in [*paper, *(c for c in ours if c not in paper)]:
        o, p = ours.get(cat), paper.get(cat)
        note = "" if o else "no skill of this category here"
        if cat == UNCATEGORISED:
            note = "no category in the SKILL.md frontmatter (category or metadata.category)"
        out += [_row("corpus by category", f"{cat}: skills", p["n"] if p else None, o["n"] if o else None, note=note,
                     analysis_set=scanned),
                _row("corpus by category", f"{cat}: mean score", p["mean"] if p else None, o["mean"] if o else None,
                     o["n"] if o else None, analysis_set=scanned)]
    return out


def _stress_level(decoy_set: str) -> int | None:
    """The configured number of decoys of a routing-stress decoy set (``pool-n20-s0`` -> 20)."""
    m = re.search(r"-n(\d+)-s\d+$", str(decoy_set))
    return int(m.group(1)) if m else None


def _routing_rows(inp: FigureData, rs: dict) -> list[SideBySide]:
    """The paper's routing-stress points against this study's levels, matched by the
    configured stress level (the paper's "k skills" is the level whose decoy set draws
    k decoys), each row naming how many skills the agent actually saw."""
    out: list[SideBySide] = []
    s = _stress_set(inp)
    if "n_visible_skills_with" not in s.pairs.columns:
        return out
    stand = inp.stand_in(s.trials, COMPOSITE)
    table = inp.stress_table(s, COMPOSITE).set_index("visible")
    band = rs.get("lift_range_1_to_20") or [None, None]
    # Positive cases only, as every row's analysis_set says (negative controls are reported apart).
    trials = positive_cases(s.trials.loc[s.trials["condition"] == "with_skill"]).copy()
    trials["level"] = trials["decoy_set"].map(_stress_level)
    # Each configured level -> the skills its with-skill trials saw.
    seen = trials.dropna(subset=["level", "n_visible_skills"]).groupby("level")["n_visible_skills"].agg(
        lambda v: sorted(set(int(x) for x in v)))
    visible_of = {int(k): v for k, v in seen.items()}

    def visible_note(k: int) -> str:
        v = visible_of.get(k)
        if not v:
            return "level not run"
        return f"{k} decoys: the agent saw {', '.join(map(str, v))} skills"

    inside = [lvl for lvl in visible_of if 1 <= lvl <= 20]
    lifts = [table.loc[v, "lift"] for lvl in inside for v in visible_of[lvl] if v in table.index]
    lifts = [x for x in lifts if x is not None and not pd.isna(x)]
    where = f"{s.description}, levels {', '.join(map(str, sorted(inside)))} decoys" if inside else s.description
    out += [_row("routing stress", "composite lift, 1-20 skills: min", band[0], min(lifts) if lifts else None,
                 note=where, analysis_set=s.description, stand=stand),
            _row("routing stress", "composite lift, 1-20 skills: max", band[1], max(lifts) if lifts else None,
                 note=where, analysis_set=s.description, stand=stand)]
    wall_trials = trials.dropna(subset=["wall_sec", "level"])
    wall = wall_trials.groupby("level")["wall_sec"].mean()
    for k, v in (rs.get("mean_wall_seconds") or {}).items():
        got = wall.get(int(k))
        out.append(_row("routing stress", f"mean wall seconds at {k} skills", v, got,
                        int((wall_trials["level"] == int(k)).sum()) if got is not None else None,
                        visible_note(int(k)), s.description, inp.stand_in(s.trials)))
    # The one pass (final_pass, aces_bench/core/modes.py): an arm's failures are not passed.
    passed = trials.assign(p=inp.outcome_values(trials, FINAL_PASS)).dropna(subset=["level", "p"])
    rate = passed.groupby("level")["p"].mean()
    for k, v in (rs.get("with_skill_pass_rate") or {}).items():
        got = rate.get(int(k))
        out.append(_row("routing stress", f"with-skill pass rate at {k} skills", v, got,
                        int((passed["level"] == int(k)).sum()) if got is not None else None, visible_note(int(k)),
                        s.description, inp.stand_in(s.trials)))
    return out


def _missingness_rows(inp: FigureData, ma: dict) -> list[SideBySide]:
    m = inp.stats.missingness
    head = inp.headline.description
    # The audit counts every trial and case key of the headline arm, negative controls too.
    every = f"{inp.headline.label}, every case (negative controls included)"
    stand = inp.stand_in(outcome=COMPOSITE)
    traj = m.trajectories.frame().set_index("condition") if m.trajectories.rows else pd.DataFrame()
    out = []
    for cond in ("baseline", "with_skill"):
        share = None
        if cond in traj.index and traj.loc[cond, "n_rows"]:
            share = traj.loc[cond, "n_missing_trajectory"] / traj.loc[cond, "n_rows"]
        out.append(_row("missingness", f"missing trajectory share, {cond.replace('_', ' ')}",
                        (ma.get("missing_trajectory_share") or {}).get(cond), share, analysis_set=every, stand=stand))
        out.append(_row("missingness", f"{cond.replace('_', ' ')} rows", ma.get(f"{cond}_rows"),
                        traj.loc[cond, "n_rows"] if cond in traj.index else None, analysis_set=every, stand=stand))
    one = m.one_sided.frame()
    one = one.loc[one["outcome"] == COMPOSITE] if len(one) else one
    out += [_row("missingness", "baseline-only case keys", ma.get("baseline_only_case_keys"),
                 one["n_base_only"].iloc[0] if len(one) else None, analysis_set=every, stand=stand),
            _row("missingness", "with-skill-only case keys", ma.get("with_skill_only_case_keys"),
                 one["n_with_only"].iloc[0] if len(one) else None, analysis_set=every, stand=stand)]
    sens = m.sensitivity.frame()
    imputed = ma.get("imputed_with_skill_failure") or {}
    for outcome in (COMPOSITE, "accuracy", "goal_accuracy"):
        part = sens.loc[sens["outcome"] == outcome] if len(sens) else sens
        out.append(_row("missingness", f"{outcome_label(outcome).lower()} lift, missing with-skill imputed as failure",
                        imputed.get(f"{outcome}_lift"), part["lift_sensitivity"].iloc[0] if len(part) else None,
                        analysis_set=head, stand=inp.stand_in(outcome=outcome)))
    return out


PaperFigure = Callable[[FigureData, dict, Path], FigureOutcome]


def draw_paper(inp: FigureData, reported: dict, out_dir: Path, scan: ScanView | None) -> list[FigureOutcome]:
    """Every paper figure, in the paper's order; skipped ones carry their reason."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [paper_structural_vs_judge(inp, reported, out_dir), paper_metric_lift(inp, reported, out_dir),
            skill_harness_heatmap(inp, out_dir), paper_harness_lift(inp, reported, out_dir),
            paper_harness_reward(inp, reported, out_dir), paper_harness_model_heatmap(inp, reported, out_dir),
            paper_routing_stress(inp, reported, out_dir), model_sweep(inp, out_dir), static_vs_live(inp, out_dir),
            paper_scan_histogram(scan, reported, out_dir), paper_top_violations(scan, out_dir)]


PAPER_DIR = "paper"


def _frame(rows: list[SideBySide]) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in rows], columns=list(SideBySide.model_fields))
    frame["n"] = frame["n"].astype("Int64")
    return frame


def side_by_side_csv_frame(rows: list[SideBySide]) -> pd.DataFrame:
    """The side-by-side as its CSV writes it: a count as an integer (145 skills scanned, not
    145.0000; the LaTeX table's rule, ``value_cells``), every other value to 4 decimals."""
    from aces_bench.reports.latex import value_cells

    frame = _frame(rows)
    for col in ("reported", "study"):
        frame[col] = frame[col].astype(object)
    for i, r in enumerate(rows):
        cells = value_cells(r.quantity, r.section, [r.reported, r.study])
        for col, v, c in (("reported", r.reported, cells[0]), ("study", r.study, cells[1])):
            if v is None or pd.isna(v):
                frame.at[frame.index[i], col] = None
            else:
                frame.at[frame.index[i], col] = str(c) if "." not in str(c) else f"{float(v):.4f}"
    return frame


def write_paper_page(out: Path, inp: FigureData, items: list[InventoryItem], *, nav: list[dict],
                     reported_path: Path | None = None) -> tuple[Path, list[SideBySide]]:
    """``<report>/paper.html`` with every paper figure, ``paper/side_by_side.{csv,json}``,
    ``tables/side_by_side.tex`` and ``tables/corpus_by_category.tex``; returns the page and
    the side-by-side rows (summary.json carries them too)."""
    from aces_bench.core.io import write_frame, write_json, write_text
    from aces_bench.reports.html import environment, relative, render, svg_data_uri
    from aces_bench.reports.latex import write_paper_tables

    reported = load_reported(reported_path)
    scan = inp.paper_scan(reported)
    figures = draw_paper(inp, reported, out / PAPER_DIR, scan)
    rows = side_by_side(inp, reported, items, scan)
    write_frame(out / PAPER_DIR / "side_by_side.csv", side_by_side_csv_frame(rows))
    stand = inp.stand_in(outcome=COMPOSITE)
    write_json(out / PAPER_DIR / "side_by_side.json", {"reported_source": reported.get("source"),
                                                      "label": REPORTED_LABEL, "analysis_set": inp.headline.description,
                                                      "stand_in": stand, "rows": rows})
    tex = write_paper_tables(out / "tables", rows, stand, inp, scan)
    views = [{"name": f.name, "title": f.title, "caption": f.caption, "skipped": f.skipped,
              "data_uri": svg_data_uri(f.svg) if f.svg else "",
              "files": [(fmt, relative(p, out)) for fmt, p in sorted(f.paths.items())]} for f in figures]
    html = render(environment(), "paper.html.j2", title="The ACES paper's figures from this study", root="",
                  nav_skills=nav, figures=views, rows=rows, label=REPORTED_LABEL, source=reported.get("source"),
                  note=reported.get("note"), scan_note=(scan.comparison.get("note") if scan else None),
                  stand_in=stand_in_text(stand), analysis_set=inp.headline.description, paper_href="paper.html",
                  profile=scan.profile if scan else None, categories=scan.categories if scan else [],
                  tex=[relative(p, out) for p in tex])
    return write_text(out / "paper.html", html), rows
