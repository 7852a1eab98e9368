"""Routing confusion in group-mode studies: which skill fired for the skill each case was meant for.

Rows are what a case expects (``expected_skill``: the target, another visible skill such
as a decoy a routing case is meant for, or ``(none)`` for a negative control, and for a
case whose skill is not visible in that arm, as the target in the baseline); columns are
every visible skill (the intervention's own, its support skills and decoys, from the
member's provenance), what else fired (a harness's own skill), ``(none)`` and
``(failed)`` (a trial whose trajectory could not be read). The diagonal over the decided
trials is the routing accuracy, with a Wilson interval. One table per skill, harness,
model, decoy set and condition; trials of isolation mode have nothing to confuse and are
left out.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd

from aces_bench.records.summary import ConfusionTable
from aces_bench.stats.inference import wilson_interval

NONE = "(none)"
FAILED = "(failed)"
GROUP = ("skill", "harness", "model", "decoy_set", "condition")


def _norm(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def routing_confusion(trials: pd.DataFrame, visible: dict[str, list[str]] | None = None) -> list[ConfusionTable]:
    """One confusion table per group-mode (skill, harness, model, decoy set, condition).

    ``visible``: run id -> the skills a trial of that run could see besides its intervention's own (support,
    decoys; from provenance). Tables written before ``expected_skill``/``fired_skill`` were recorded give none.
    """
    need = {"workspace_mode", "expected_skill", "fired_skill", *GROUP}
    if not need <= set(trials.columns):
        return []
    group_mode = trials.loc[trials["workspace_mode"].astype(str) == "group"]
    group_mode = group_mode.loc[group_mode["status"].astype(str) != "skipped"]
    if group_mode.empty or group_mode["fired_skill"].isna().all():
        return []
    out = []
    for key, part in group_mode.groupby(list(GROUP), sort=True, dropna=False):
        group = {g: str(v) for g, v in zip(GROUP, key, strict=True)}
        seen: set[str] = set()
        for rid in part["run_id"].astype(str).unique() if "run_id" in part else []:
            seen |= set((visible or {}).get(rid, []))
        if group["condition"] != "baseline":
            seen.add(group["skill"])
        by_norm = {_norm(s): s for s in seen}
        cells: Counter = Counter()
        for expected, fired in zip(part["expected_skill"], part["fired_skill"], strict=True):
            row = NONE if expected is None or pd.isna(expected) else by_norm.get(_norm(str(expected)), NONE)
            col = FAILED if fired is None or pd.isna(fired) else by_norm.get(_norm(str(fired)), str(fired))
            cells[(row, col)] += 1
        rows = sorted({r for r, _ in cells} - {NONE}, key=lambda r: (r != group["skill"], r)) + [NONE]
        extra = sorted({c for _, c in cells} - set(seen) - {NONE, FAILED})
        columns = sorted(seen, key=lambda c: (c != group["skill"], c)) + extra + [NONE, FAILED]
        decided = sum(n for (_, c), n in cells.items() if c != FAILED)
        right = sum(n for (r, c), n in cells.items() if r == c)
        lo, hi = wilson_interval(right, decided)
        out.append(ConfusionTable(
            group=group, rows=rows, columns=columns, counts=[[cells[(r, c)] for c in columns] for r in rows],
            n_trials=len(part), n_decided=decided, n_right=right,
            routing_accuracy=right / decided if decided else None, routing_ci=None if lo is None else (lo, hi)))
    return out


def visible_skills(members) -> dict[str, list[str]]:
    """run id -> the support and decoy skills its provenance lists (what every trial of the run could see)."""
    out: dict[str, list[str]] = {}
    for m in members:
        if m.provenance is None:
            continue
        names = [s.name for s in m.provenance.skills if s.role != "target"]
        for rid in m.run_ids:
            out[rid] = names
    return out
