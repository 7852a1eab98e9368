"""The ACES paper's figures and tables, drawn from a study's own results with the
paper's reported values beside them (``aces_paper_reported.json``, copied verbatim
from the paper's text, tables and appendices).

Every figure here marks the paper's value with one labelled overlay ("ACES paper,
reported") where the paper gives one, and says so in the caption where it does not.
The side-by-side table lists each reported quantity next to the study's own; a study
value the results cannot give is None ("n/a"), never 0. Nothing is fitted to the
paper: its values are only drawn and tabulated.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel

from aces_bench.errors import ReportError
from aces_bench.reports.figures import (
    FigureInputs,
    FigureOutcome,
    _errs,
    model_sweep,
    skill_harness_heatmap,
    static_vs_live,
)
from aces_bench.reports.inventory import InventoryItem
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
from aces_bench.stats import lift_table
from aces_bench.stats.pairing import COMPOSITE, FINAL_PASS, OUTCOME_ONLY, outcome_values

REPORTED_LABEL = "ACES paper, reported"
REPORTED_FILE = "aces_paper_reported.json"
REPORTED_COLOR = OKABE_ITO.get("black", "#000000")
# The paper's harness names -> the harness option names of this project.
HARNESS_NAMES = {"OpenCode": "opencode", "Claude Code": "claude-code", "Codex": "codex", "Terminus-2": "terminus-2"}
# Evidence inventory: the report's inventory item -> the paper's key.
INVENTORY_KEYS = {
    "harnesses": "primary_harnesses", "skill-agent cells": "skill_agent_cells",
    "cells with scored pairs": "cells_with_scored_pairs", "scored paired cases": "scored_paired_cases",
    "condition runs (trials)": "reward_rows", "saved ATIF trajectories": "saved_atif_trajectories",
    "recorded agent steps": "recorded_agent_steps", "tool calls": "tool_calls",
    "behavior observations": "behavior_observations",
}


class SideBySide(BaseModel):
    section: str
    quantity: str
    reported: float | None
    study: float | None
    n: int | None = None
    note: str = ""


def load_reported(path: Path | None = None) -> dict[str, Any]:
    """The paper's reported figures (the packaged copy unless ``path`` is given)."""
    try:
        text = Path(path).read_text() if path is not None else (
            resources.files("aces_bench.reports").joinpath(REPORTED_FILE).read_text())
        data = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ReportError(f"cannot read the paper's reported figures: {exc}", where=path or REPORTED_FILE,
                          fix="pass the ACES paper's reported.json") from None
    if not isinstance(data, dict) or "headline_live" not in data:
        raise ReportError("not a reported-figures file (no headline_live block)", where=path or REPORTED_FILE,
                          fix="pass the ACES paper's reported.json")
    return data


def _f(x: Any) -> float | None:
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _mark(ax, x, y, *, horizontal: bool = False, label: bool = True) -> None:
    """The reported value as an open diamond, labelled once per axes."""
    kw = {"marker": "D", "s": 42, "facecolor": "white", "edgecolor": REPORTED_COLOR, "linewidth": 1.4, "zorder": 5}
    ax.scatter(y if horizontal else x, x if horizontal else y, label=REPORTED_LABEL if label else None, **kw)


def _pooled(inp: FigureInputs) -> pd.DataFrame:
    return inp.stats.lift_pooled.frame().set_index("outcome")


def paper_metric_lift(inp: FigureInputs, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_metric_lift", "Metric lift: this study vs the ACES paper"
    paper = {**reported["headline_live"].get("metric_lift", {}),
             COMPOSITE: reported["headline_live"].get("composite_lift_mean"),
             OUTCOME_ONLY: reported["headline_live"].get("outcome_only_lift")}
    table = _pooled(inp)
    order = [o for o in ("skill_execution", "behavior_check", "skill_efficiency", "accuracy", "goal_accuracy",
                         "security", COMPOSITE, OUTCOME_ONLY) if o in table.index or o in paper]
    with paper_style():
        fig = new_figure(6.4, 0.8 + 0.4 * len(order))
        ax = fig.subplots()
        y = np.arange(len(order))[::-1]
        rows = table.reindex(order)
        lift = rows["lift"].astype(float).to_numpy()
        ax.barh(y, np.nan_to_num(lift), color=[LIFT if (v or 0) >= 0 else NEGATIVE for v in np.nan_to_num(lift)],
                height=0.6, label="this study")
        ax.errorbar(np.nan_to_num(lift), y, xerr=_errs(rows.fillna({"lift": 0})), fmt="none",
                    ecolor="black", elinewidth=0.8, capsize=2)
        ys = [yi for yi, o in zip(y, order, strict=True) if _f(paper.get(o)) is not None]
        xs = [_f(paper[o]) for o in order if _f(paper.get(o)) is not None]
        if xs:
            _mark(ax, np.array(ys), np.array(xs), horizontal=True)
        ax.axvline(0, color="black", linewidth=0.6)
        labels = [f"{o} (n={int(n)})" if n == n and n else f"{o} (no pair)" for o, n in zip(order, rows["n"], strict=True)]
        ax.set_yticks(y, labels)
        ax.set_xlabel(f"lift (with skill − baseline), {int(inp.level * 100)}% CI")
        ax.legend(loc="lower right")
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, "Bars: this study's mean paired lift with its CI; open diamonds: the paper's "
                         f"reported lift ({REPORTED_LABEL}).", paths)


def paper_harness_lift(inp: FigureInputs, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_harness_lift", "Composite lift per harness: this study vs the ACES paper"
    table = lift_table(inp.pairs, by=("harness",), outcomes=(COMPOSITE,), level=inp.level)
    table = table.loc[table["n"] > 0].set_index("harness")
    paper = {HARNESS_NAMES.get(r["harness"], r["harness"]): _f(r.get("lift")) for r in reported.get("by_harness", [])}
    names = sorted(set(table.index) | set(paper))
    if table.empty:
        return FigureOutcome(name, title, skipped="no harness has a scored composite pair")
    with paper_style():
        fig = new_figure(1.8 + 0.9 * len(names), 3.0)
        ax = fig.subplots()
        x = np.arange(len(names))
        rows = table.reindex(names)
        lift = rows["lift"].astype(float).to_numpy()
        ax.bar(x, np.nan_to_num(lift), 0.6, color=WITH_SKILL, label="this study")
        ax.errorbar(x, np.nan_to_num(lift), yerr=_errs(rows.fillna({"lift": 0})), fmt="none",
                    ecolor="black", elinewidth=0.8, capsize=2)
        px = [i for i, h in enumerate(names) if paper.get(h) is not None]
        if px:
            _mark(ax, np.array(px), np.array([paper[names[i]] for i in px]))
        for i in range(len(names)):
            if not np.isfinite(lift[i]):
                ax.text(i, 0.01, "not run", ha="center", fontsize=7, rotation=90)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xticks(x, names, rotation=20, ha="right")
        ax.set_ylabel("composite lift")
        ax.legend(loc="upper right")
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, f"Bars: this study; open diamonds: {REPORTED_LABEL} (by_harness).", paths)


def paper_harness_model_heatmap(inp: FigureInputs, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_harness_model_heatmap", f"{inp.outcome} lift by harness and model"
    table = inp.lift(("harness", "model"))
    if table.empty or not (table["n"] > 0).any():
        return FigureOutcome(name, title, skipped="no (harness, model) cell has a scored pair")
    grid = table.pivot(index="harness", columns="model", values="lift").astype(float)
    counts = table.pivot(index="harness", columns="model", values="n")
    values = grid.to_numpy()
    finite = values[np.isfinite(values)]
    bound = max(float(np.abs(finite).max()) if finite.size else 0.05, 0.05)
    from matplotlib.colors import TwoSlopeNorm

    with paper_style():
        fig = new_figure(1.8 + 1.1 * len(grid.columns), 1.2 + 0.45 * len(grid.index))
        ax = fig.subplots()
        im = ax.imshow(np.ma.masked_invalid(values), cmap=DIVERGING, norm=TwoSlopeNorm(vmin=-bound, vcenter=0.0, vmax=bound), aspect="auto")
        ax.set_xticks(range(len(grid.columns)), grid.columns, rotation=30, ha="right")
        ax.set_yticks(range(len(grid.index)), grid.index)
        ax.grid(False)
        for i in range(values.shape[0]):
            for j in range(values.shape[1]):
                n = counts.iat[i, j]
                text = "not run" if not np.isfinite(values[i, j]) else f"{values[i, j]:+.2f}\nn={int(n)}"
                ax.text(j, i, text, ha="center", va="center", fontsize=7)
        fig.colorbar(im, ax=ax, label=f"{inp.outcome} lift")
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, "Mean paired lift per (harness, model). The paper reports no per-cell values, "
                         "so no reported overlay.", paths)


def paper_routing_stress(inp: FigureInputs, reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_routing_stress", "Routing stress: lift and wall time vs visible skills (log axis)"
    rs = reported.get("routing_stress", {})
    if "n_visible_skills_with" not in inp.pairs.columns:
        return FigureOutcome(name, title, skipped="the trials table has no n_visible_skills column")
    pairs = inp.pairs.loc[inp.pairs["n_visible_skills_with"].notna()]
    pairs = pairs.assign(visible=pairs["n_visible_skills_with"].astype(int))
    if pairs["visible"].nunique() < 2:
        return FigureOutcome(name, title, skipped="every with-skill trial saw the same number of skills")
    table = lift_table(pairs, by=("visible",), outcomes=(inp.outcome,), level=inp.level)
    trials = inp.trials.loc[inp.trials["condition"] == "with_skill"].dropna(subset=["n_visible_skills"])
    wall = trials.dropna(subset=["wall_sec"]).groupby("n_visible_skills")["wall_sec"].mean()
    with paper_style():
        fig = new_figure(7.2, 3.0)
        ax, ax2 = fig.subplots(1, 2)
        x = table["visible"].astype(int).to_numpy()
        ax.errorbar(x, table["lift"].astype(float), yerr=_errs(table), marker="o", color=LIFT, capsize=3,
                    label=f"this study ({inp.outcome})")
        band = rs.get("lift_range_1_to_20")
        if band and len(band) == 2:
            ax.fill_between([1, 20], [band[0]] * 2, [band[1]] * 2, color=REPORTED_COLOR, alpha=0.25,
                            label=f"{REPORTED_LABEL}: lift range, 1-20 skills")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_xscale("log")
        ax.set_xticks(x, [str(v) for v in x])
        ax.set_xlabel("visible skills (log scale)")
        ax.set_ylabel("lift")
        ax.legend(loc="best", fontsize=7)
        if len(wall):
            ax2.plot(wall.index.astype(int), wall.to_numpy(float), marker="s", color=BASELINE, label="this study")
        paper_wall = {int(k): _f(v) for k, v in (rs.get("mean_wall_seconds") or {}).items()}
        if paper_wall:
            _mark(ax2, np.array(list(paper_wall)), np.array(list(paper_wall.values())))
        ax2.set_xscale("log")
        ticks = sorted(set(x) | set(paper_wall))
        ax2.set_xticks(ticks, [str(v) for v in ticks])
        ax2.set_xlabel("visible skills (log scale)")
        ax2.set_ylabel("mean with-skill wall time (s)")
        ax2.set_ylim(bottom=0)
        ax2.legend(loc="best", fontsize=7)
        fig.suptitle(title)
        paths = save_figure(fig, out, name)
    note = "" if len(wall) else " Wall time was not recorded."
    return FigureOutcome(name, title, f"Left: paired lift by visible skills; shaded: {REPORTED_LABEL} lift range for "
                         f"1-20 skills. Right: mean with-skill wall time; open diamonds: {REPORTED_LABEL}." + note,
                         paths)


def paper_scan_histogram(scores: list[float], reported: dict, out: Path) -> FigureOutcome:
    name, title = "paper_scan_histogram", "Tier 1 structural scores of the study's skills"
    ss = reported.get("static_scan", {}).get("structural_score", {})
    if not scores:
        return FigureOutcome(name, title, skipped="no target skill was scanned")
    with paper_style():
        fig = new_figure(5.6, 2.8)
        ax = fig.subplots()
        ax.hist(scores, bins=np.arange(0, 102, 2), color=WITH_SKILL, edgecolor="white", label="this study")
        gate = reported.get("static_scan", {}).get("default_gate", 70)
        ax.axvline(gate, color="black", linestyle=":", linewidth=0.8, label=f"gate {gate}")
        if _f(ss.get("mean")) is not None:
            ax.axvline(ss["mean"], color=REPORTED_COLOR, linewidth=1.4, label=f"{REPORTED_LABEL}: mean {ss['mean']:g}")
        if ss.get("min") is not None and ss.get("max") is not None:
            ax.axvspan(ss["min"], ss["max"], color=REPORTED_COLOR, alpha=0.08)
        ax.set_xlim(max(0, min(min(scores), ss.get("min", 100), gate) - 5), 100)
        ax.set_xlabel("structural score (0-100)")
        ax.set_ylabel("skills")
        ax.legend(loc="upper left", fontsize=7)
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, f"Histogram of this study's scores; line and band: {REPORTED_LABEL} mean and "
                         f"range over its {reported.get('static_scan', {}).get('n_skills', '?')} skills.", paths)


def paper_top_violations(rows: list[dict], out: Path) -> FigureOutcome:
    name, title = "paper_top_violations", "Top rule violations: share of skills"
    if not rows:
        return FigureOutcome(name, title, skipped="no target skill was scanned")
    with paper_style():
        fig = new_figure(6.4, 0.9 + 0.42 * len(rows))
        ax = fig.subplots()
        y = np.arange(len(rows))[::-1]
        ours = np.array([r["ours"] if r["ours"] is not None else np.nan for r in rows], dtype=float)
        ax.barh(y, np.nan_to_num(ours), color=WITH_SKILL, height=0.6, label="this study")
        _mark(ax, y, np.array([r["reported"] for r in rows], dtype=float), horizontal=True)
        ax.set_yticks(y, [r["reported_label"] for r in rows])
        ax.set_xlim(0, 1.05)
        ax.set_xlabel("share of scanned skills violating the rule")
        ax.legend(loc="lower right", fontsize=7)
        ax.set_title(title)
        paths = save_figure(fig, out, name)
    return FigureOutcome(name, title, f"The rules the paper names; bars: this study's skills, open diamonds: "
                         f"{REPORTED_LABEL}.", paths)


def _row(section: str, quantity: str, reported: Any, study: Any, n: Any = None, note: str = "") -> SideBySide:
    return SideBySide(section=section, quantity=quantity, reported=_f(reported), study=_f(study),
                      n=int(n) if _f(n) is not None else None, note=note)


def side_by_side(inp: FigureInputs, reported: dict, items: list[InventoryItem], scan: dict | None) -> list[SideBySide]:
    """Every reported quantity this study can be set against, with the study's value (None: not available)."""
    h, rows = reported["headline_live"], []
    pooled = _pooled(inp)

    def pooled_value(outcome: str, col: str):
        return pooled.loc[outcome, col] if outcome in pooled.index else None

    n_comp = pooled_value(COMPOSITE, "n")
    rows += [
        _row("headline", "composite lift", h.get("composite_lift_mean"), pooled_value(COMPOSITE, "lift"), n_comp),
        _row("headline", "composite lift CI low", (h.get("composite_lift_ci95_normal") or [None])[0],
             pooled_value(COMPOSITE, "ci_lo"), n_comp,
             f"paper: normal interval over paired cases; this study: {pooled_value(COMPOSITE, 'ci_method') or 'no interval'}"),
        _row("headline", "composite lift CI high", (h.get("composite_lift_ci95_normal") or [None, None])[1],
             pooled_value(COMPOSITE, "ci_hi"), n_comp),
        _row("headline", "composite with skill", h.get("composite_with_skill"), pooled_value(COMPOSITE, "mean_with"), n_comp),
        _row("headline", "composite baseline", h.get("composite_baseline"), pooled_value(COMPOSITE, "mean_base"), n_comp),
        _row("headline", "composite median lift", h.get("composite_lift_median"), pooled_value(COMPOSITE, "median"), n_comp),
        _row("headline", "share of cases with positive lift", h.get("composite_positive_share"),
             pooled_value(COMPOSITE, "share_pos"), n_comp),
        _row("headline", "outcome-only lift", h.get("outcome_only_lift"), pooled_value(OUTCOME_ONLY, "lift"),
             pooled_value(OUTCOME_ONLY, "n")),
    ]
    for metric, value in (h.get("metric_lift") or {}).items():
        rows.append(_row("metric lift", metric, value, pooled_value(metric, "lift"), pooled_value(metric, "n")))
    boot = inp.stats.bootstrap.frame()
    for clustering, key in (("skill", "cluster_bootstrap_ci95_over_skills"), ("cell", "cluster_bootstrap_ci95_over_cells")):
        part = boot.loc[(boot["clustering"] == clustering) & (boot["outcome"] == COMPOSITE)] if len(boot) else boot
        lo, hi = (part["ci_lo"].iloc[0], part["ci_hi"].iloc[0]) if len(part) else (None, None)
        paper = h.get(key) or [None, None]
        rows += [_row("headline", f"bootstrap CI over {clustering}s, low", paper[0], lo),
                 _row("headline", f"bootstrap CI over {clustering}s, high", paper[1], hi)]
    sd = inp.stats.within_cell_sd.frame()
    sd = sd.loc[(sd["outcome"] == COMPOSITE) & (sd["condition"] == "lift")] if len(sd) else sd
    sdv = sd["sd_between_attempts"].dropna() if len(sd) else pd.Series(dtype=float)
    paper_sd = h.get("within_cell_lift_sd") or {}
    rows += [_row("repeated cells", "within-cell lift SD, median", paper_sd.get("median"),
                  sdv.median() if len(sdv) else None, len(sdv)),
             _row("repeated cells", "within-cell lift SD, mean", paper_sd.get("mean"), sdv.mean() if len(sdv) else None,
                  len(sdv))]
    by_h = lift_table(inp.pairs, by=("harness",), outcomes=(COMPOSITE,), level=inp.level).set_index("harness")
    for r in reported.get("by_harness", []):
        ours = HARNESS_NAMES.get(r["harness"], r["harness"])
        got = by_h.loc[ours] if ours in by_h.index else None
        rows.append(_row("by harness", f"{ours} composite lift", r.get("lift"),
                         got["lift"] if got is not None else None, got["n"] if got is not None else None,
                         "" if got is not None else "harness not in this study"))
    rows += _routing_rows(inp, reported.get("routing_stress", {}))
    sv = reported.get("static_vs_live", {})
    sec = inp.static
    t1 = sec.tier1 if sec is not None else None
    t2 = sec.tier2 if sec is not None else None
    rows += [_row("static vs live", "Tier 1 Spearman rho", sv.get("tier1_spearman"), t1.rho if t1 else None,
                  t1.n if t1 else None),
             _row("static vs live", "Tier 2 Spearman rho", sv.get("tier2_spearman"), t2.rho if t2 else None,
                  t2.n if t2 else None, "" if t2 else (sec.tier2_status if sec is not None else "no scan"))]
    if scan:
        for r in scan.get("score_rows", []):
            rows.append(_row("static scan", r["figure"], r["reported"], r["ours"]))
        for r in scan.get("violation_rows", []):
            rows.append(_row("top violations", r["reported_label"], r["reported"], r["ours"]))
    inv = reported.get("evidence_inventory", {})
    for item in items:
        key = INVENTORY_KEYS.get(item.item)
        if key:
            rows.append(_row("evidence inventory", item.item, inv.get(key), item.count, note=key))
    rows += _missingness_rows(inp, reported.get("missingness_audit", {}))
    return rows


def _routing_rows(inp: FigureInputs, rs: dict) -> list[SideBySide]:
    out: list[SideBySide] = []
    if "n_visible_skills_with" not in inp.pairs.columns:
        return out
    pairs = inp.pairs.loc[inp.pairs["n_visible_skills_with"].notna()]
    table = lift_table(pairs.assign(visible=pairs["n_visible_skills_with"].astype(int)), by=("visible",),
                       outcomes=(inp.outcome,), level=inp.level).set_index("visible")
    band = rs.get("lift_range_1_to_20") or [None, None]
    inside = table.loc[[v for v in table.index if 1 <= v <= 20], "lift"].dropna()
    out += [_row("routing stress", "lift, 1-20 skills: min", band[0], inside.min() if len(inside) else None),
            _row("routing stress", "lift, 1-20 skills: max", band[1], inside.max() if len(inside) else None)]
    trials = inp.trials.loc[inp.trials["condition"] == "with_skill"]
    wall = trials.dropna(subset=["wall_sec", "n_visible_skills"]).groupby("n_visible_skills")["wall_sec"].mean()
    for k, v in (rs.get("mean_wall_seconds") or {}).items():
        out.append(_row("routing stress", f"mean wall seconds at {k} skills", v, wall.get(int(k))))
    # The one pass (final_pass, aces_bench/mode_registry.py): an arm's failures are not passed.
    passed = trials.assign(p=outcome_values(trials, FINAL_PASS)).dropna(subset=["n_visible_skills", "p"])
    rate = passed.groupby("n_visible_skills")["p"].mean()
    for k, v in (rs.get("with_skill_pass_rate") or {}).items():
        out.append(_row("routing stress", f"with-skill pass rate at {k} skills", v, rate.get(int(k))))
    return out


def _missingness_rows(inp: FigureInputs, ma: dict) -> list[SideBySide]:
    m = inp.stats.missingness
    traj = m.trajectories.frame().set_index("condition") if m.trajectories.rows else pd.DataFrame()
    out = []
    for cond in ("baseline", "with_skill"):
        share = None
        if cond in traj.index and traj.loc[cond, "n_rows"]:
            share = traj.loc[cond, "n_missing_trajectory"] / traj.loc[cond, "n_rows"]
        out.append(_row("missingness", f"missing trajectory share, {cond}",
                        (ma.get("missing_trajectory_share") or {}).get(cond), share))
        out.append(_row("missingness", f"{cond} rows", ma.get(f"{cond}_rows"),
                        traj.loc[cond, "n_rows"] if cond in traj.index else None))
    one = m.one_sided.frame()
    one = one.loc[one["outcome"] == COMPOSITE] if len(one) else one
    out += [_row("missingness", "baseline-only case keys", ma.get("baseline_only_case_keys"),
                 one["n_base_only"].iloc[0] if len(one) else None),
            _row("missingness", "with-skill-only case keys", ma.get("with_skill_only_case_keys"),
                 one["n_with_only"].iloc[0] if len(one) else None)]
    sens = m.sensitivity.frame()
    imputed = ma.get("imputed_with_skill_failure") or {}
    for outcome in (COMPOSITE, "accuracy", "goal_accuracy"):
        part = sens.loc[sens["outcome"] == outcome] if len(sens) else sens
        out.append(_row("missingness", f"{outcome} lift, missing with-skill imputed as failure",
                        imputed.get(f"{outcome}_lift"), part["lift_sensitivity"].iloc[0] if len(part) else None))
    return out


PaperFigure = Callable[[FigureInputs, dict, Path], FigureOutcome]
PAPER_FIGURES: tuple[PaperFigure, ...] = (paper_metric_lift, paper_harness_lift, paper_harness_model_heatmap,
                                          paper_routing_stress)


def draw_paper(inp: FigureInputs, reported: dict, out_dir: Path, scan_scores: list[float],
               violation_rows: list[dict]) -> list[FigureOutcome]:
    """Every paper figure, in the paper's order; skipped ones carry their reason."""
    out_dir.mkdir(parents=True, exist_ok=True)
    figs = [paper_metric_lift(inp, reported, out_dir), skill_harness_heatmap(inp, out_dir),
            paper_harness_lift(inp, reported, out_dir), paper_harness_model_heatmap(inp, reported, out_dir),
            paper_routing_stress(inp, reported, out_dir), model_sweep(inp, out_dir), static_vs_live(inp, out_dir),
            paper_scan_histogram(scan_scores, reported, out_dir), paper_top_violations(violation_rows, out_dir)]
    return figs


PAPER_DIR = "paper"


def _scan_for_paper(static, reported: dict) -> tuple[list[float], dict | None]:
    """Tier 1 scores of the scanned targets and the static package's comparison with the paper."""
    if static is None:
        return [], None
    scanned = [s for s in static.skills if s.status == "scanned" and s.structural is not None]
    if not scanned:
        return [], None
    from aces_bench.static import ScanOptions, run_scan
    from aces_bench.static.corpus import compare

    corpus, _ = run_scan(sorted({s.path for s in scanned}), ScanOptions(lint=False))
    return [float(s.structural) for s in scanned], compare(corpus, reported.get("static_scan", {}))


def write_paper_page(out: Path, inp: FigureInputs, items: list[InventoryItem], *, nav: list[dict],
                     reported_path: Path | None = None) -> Path:
    """``<report>/paper.html`` with every paper figure and ``paper/side_by_side.{csv,json}``."""
    from aces_bench.io import write_frame, write_json, write_text
    from aces_bench.reports.html import environment, render, svg_data_uri
    from aces_bench.reports.pages import relative

    reported = load_reported(reported_path)
    scores, scan = _scan_for_paper(inp.static, reported)
    figures = draw_paper(inp, reported, out / PAPER_DIR, scores, (scan or {}).get("violation_rows", []))
    rows = side_by_side(inp, reported, items, scan)
    frame = pd.DataFrame([r.model_dump() for r in rows])
    write_frame(out / PAPER_DIR / "side_by_side.csv", frame)
    write_json(out / PAPER_DIR / "side_by_side.json", {"reported_source": reported.get("source"),
                                                      "label": REPORTED_LABEL, "rows": rows})
    views = [{"name": f.name, "title": f.title, "caption": f.caption, "skipped": f.skipped,
              "data_uri": svg_data_uri(f.svg) if f.svg else "",
              "files": [(fmt, relative(p, out)) for fmt, p in sorted(f.paths.items())]} for f in figures]
    html = render(environment(), "paper.html.j2", title="The ACES paper's figures from this study", root="",
                  nav_skills=nav, figures=views, rows=rows, label=REPORTED_LABEL, source=reported.get("source"),
                  note=reported.get("note"), scan_note=(scan or {}).get("note"))
    return write_text(out / "paper.html", html)
