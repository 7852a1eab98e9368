"""The paper page's side-by-side rows: each quantity the ACES paper reports next to this
study's own value, its n, the analysis set it was computed on and its stand-ins.

Built before anything is drawn and stored in ``ReportSummary.side_by_side``;
``aces_bench.reports.paper`` only writes them out (CSV, JSON, LaTeX, HTML). A study value
the results cannot give is None ("n/a"), never 0; nothing is fitted to the paper.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from aces_bench.agents.profiles import paper_harness  # the paper's harness labels (HarnessProfile.paper_label)
from aces_bench.analysis.figure_data import FigureInputs
from aces_bench.analysis.paper import UNCATEGORISED
from aces_bench.core.outcomes import COMPOSITE, FINAL_PASS, OUTCOME_ONLY
from aces_bench.records.summary import SideBySide
from aces_bench.records.trials import positive_cases
from aces_bench.reports.analysis import STRESS_ARM
from aces_bench.reports.inventory import InventoryItem
from aces_bench.reports.labels import outcome_label
from aces_bench.reports.reported import ScanView, finite
from aces_bench.reports.standin import stand_in_text
from aces_bench.stats import outcome_values

# Evidence inventory: the report's inventory item -> the paper's key.
INVENTORY_KEYS = {
    "harnesses": "primary_harnesses", "skill-agent cells": "skill_agent_cells",
    "cells with scored pairs": "cells_with_scored_pairs", "scored paired cases": "scored_paired_cases",
    "condition runs (trials)": "reward_rows", "saved ATIF trajectories": "saved_atif_trajectories",
    "recorded agent steps": "recorded_agent_steps", "tool calls": "tool_calls",
    "behavior observations": "behavior_observations",
}


def _row(section: str, quantity: str, reported: Any, study: Any, n: Any = None, note: str = "",
         analysis_set: str = "", stand: list[str] | None = None) -> SideBySide:
    return SideBySide(section=section, quantity=quantity, reported=finite(reported), study=finite(study),
                      n=int(n) if finite(n) is not None else None, note=note, analysis_set=analysis_set,
                      stand_in=stand_in_text(stand or []) if finite(study) is not None else "")


def side_by_side(inp: FigureInputs, reported: dict, items: list[InventoryItem], scan: ScanView | None
                 ) -> list[SideBySide]:
    """Every reported quantity this study can be set against, with the study's value (None: not available)."""
    h, rows = reported["headline_live"], []
    pooled = inp.stats.lift_pooled.frame().set_index("outcome")
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
    whole = inp.sets.trials
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


def _routing_rows(inp: FigureInputs, rs: dict) -> list[SideBySide]:
    """The paper's routing-stress points against this study's levels, matched by the
    configured stress level (the paper's "k skills" is the level whose decoy set draws
    k decoys), each row naming how many skills the agent actually saw."""
    out: list[SideBySide] = []
    s = inp.sets.or_headline(STRESS_ARM)
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
    passed = trials.assign(p=outcome_values(trials, FINAL_PASS)).dropna(subset=["level", "p"])
    rate = passed.groupby("level")["p"].mean()
    for k, v in (rs.get("with_skill_pass_rate") or {}).items():
        got = rate.get(int(k))
        out.append(_row("routing stress", f"with-skill pass rate at {k} skills", v, got,
                        int((passed["level"] == int(k)).sum()) if got is not None else None, visible_note(int(k)),
                        s.description, inp.stand_in(s.trials)))
    return out


def _missingness_rows(inp: FigureInputs, ma: dict) -> list[SideBySide]:
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
