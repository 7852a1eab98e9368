"""The evidence inventory and per-harness coverage: what a study's numbers rest on.

Counts only (no statistic): skills, cells, paired cases, trajectories, steps, tool
calls, behavior observations and what is missing. A count the stored results cannot
give (no grades file) is None and shown as "n/a", never 0. The rows are
``aces_bench.reports.inventory``'s, which the tables and pages render.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from aces_bench.records.summary import ReportSummary
from aces_bench.records.trials import CELL_KEY, GradedTrial
from aces_bench.reports.inventory import CoverageRow, InventoryItem
from aces_bench.reports.labels import outcome_label


def _sum(frame: pd.DataFrame, column: str) -> int | None:
    if column not in frame.columns or frame[column].isna().all():
        return None
    return int(pd.to_numeric(frame[column], errors="coerce").fillna(0).sum())


def behavior_observations(grades: Iterable[GradedTrial]) -> int | None:
    """Judgments of expected behaviors recorded in grades (one per behavior per trial)."""
    total, seen = 0, False
    for g in grades:
        seen = True
        m = g.metrics.get("behavior_check")
        if m is not None:
            total += sum(1 for e in m.evidence if e.check.startswith("behavior[") and e.passed is not None)
    return total if seen else None


def inventory(trials: pd.DataFrame, summary: ReportSummary, grades: list[GradedTrial] | None) -> list[InventoryItem]:
    """What the whole study holds (every arm and condition, ``WHOLE_STUDY``): counts over
    ``trials``, its with-skill/baseline pairs scored on the headline outcome included."""
    from aces_bench.stats import build_pairs

    o = summary.headline_outcome
    pairs = build_pairs(trials.loc[trials["condition"].isin(("with_skill", "baseline"))], outcomes=(o,))
    scored = pairs[f"lift_{o}"].notna()
    n_one_sided = int((pairs[f"with_{o}"].notna() ^ pairs[f"base_{o}"].notna()).sum())
    scored_cells = int(pairs.loc[scored].groupby(list(CELL_KEY), dropna=False).ngroups) if scored.any() else 0
    status = trials["status"].astype(str)
    failed = status[status != "ok"].value_counts().sort_index()
    cells = trials.groupby(list(CELL_KEY), dropna=False).ngroups
    has = trials["has_trajectory"].fillna(False).astype(bool)
    return [
        InventoryItem(item="skills", count=int(trials["skill"].nunique())),
        InventoryItem(item="harnesses", count=int(trials["harness"].nunique())),
        InventoryItem(item="skill-agent cells", count=int(cells), note="(skill, harness, model, workspace mode)"),
        InventoryItem(item="cells with scored pairs", count=scored_cells, note=f"on {outcome_label(o).lower()}"),
        InventoryItem(item="paired case keys", count=len(pairs)),
        InventoryItem(item="scored paired cases", count=int(scored.sum()), note=f"{outcome_label(o).lower()} scored on both sides"),
        InventoryItem(item="condition runs (trials)", count=len(trials)),
        InventoryItem(item="trials that ran to completion", count=int((status == "ok").sum())),
        InventoryItem(item="saved ATIF trajectories", count=int(has.sum())),
        InventoryItem(item="recorded agent steps", count=_sum(trials, "n_steps")),
        InventoryItem(item="tool calls", count=_sum(trials, "n_tool_calls")),
        InventoryItem(item="behavior observations", count=behavior_observations(grades) if grades is not None else None,
                      note="decided behavior-check judgments"),
        InventoryItem(item="missing: trials without trajectory", count=int((~has).sum())),
        InventoryItem(item="missing: failed trials", count=int(failed.sum()),
                      note=", ".join(f"{k} {v}" for k, v in failed.items())),
        InventoryItem(item="missing: one-sided case keys", count=n_one_sided, note="scored on one side only"),
    ]


def coverage(trials: pd.DataFrame, summary: ReportSummary) -> list[CoverageRow]:
    """Per harness over ``trials`` (the headline set), with the headline lift per harness."""
    lift = {r.group["harness"]: r for r in summary.by_harness if r.outcome == summary.headline_outcome}
    rows = []
    for h, part in trials.groupby("harness", sort=True):
        status = part["status"].astype(str)
        r = lift.get(str(h))
        rows.append(CoverageRow(
            harness=str(h), models=sorted(part["model"].astype(str).unique()), n_skills=int(part["skill"].nunique()),
            n_cells=int(part.groupby(list(CELL_KEY), dropna=False).ngroups), n_trials=len(part),
            n_ok=int((status == "ok").sum()), n_failed=int((status != "ok").sum()),
            n_scored_pairs=r.n if r else 0, lift=r.lift if r else None,
        ))
    return rows
