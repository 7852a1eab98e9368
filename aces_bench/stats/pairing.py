"""Paired cases: one row per ``PAIR_KEY``, with-skill minus baseline for every outcome
(or, for a calibration arm, its treatment minus its control: ``build_pairs(sides=...)``).

The paired frame is an *outer* join of the two conditions, so a case run (or scored)
on one side only keeps its row: its lift is NaN and ``missingness`` counts it. Nothing
is dropped here; statistics downstream use the rows whose lift is defined.

Outcome columns of the paired frame, for each outcome ``o`` in ``OUTCOMES``:
``with_<o>``, ``base_<o>`` and ``lift_<o>`` (with minus base, NaN unless both scored).
It carries the case attributes ``case_kind`` and ``negative_control``, and per side
``present_<side>``, ``status_<side>``, ``traj_<side>``, ``n_visible_skills_<side>`` and ``final_pass_<side>``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from aces_bench.core.conditions import ALL_CONDITIONS, PAIRED
from aces_bench.core.errors import ReportError
from aces_bench.core.metrics import metric_column, outcome_metrics
from aces_bench.core.outcomes import (
    COMPOSITE,
    FINAL_PASS,
    OUTCOME,
    OUTCOME_ONLY,
    OUTCOME_PER_PROTOCOL,
    OUTCOMES,
    REWARD,
)
from aces_bench.records.trials import PAIR_KEY

SIDES = {"with_skill": "with", "baseline": "base"}
TAGS = tuple(SIDES.values())

REQUIRED_COLUMNS = (*PAIR_KEY, "condition", "status")
CASE_ATTRS = ("case_kind", "negative_control")
_SIDE_EXTRAS = {"status": "status", "has_trajectory": "traj", "n_visible_skills": "n_visible_skills",
                "final_pass": "final_pass"}


def check_outcome(outcome: str) -> str:
    """Return ``outcome`` if it is one this layer knows; else a user error listing them."""
    if outcome not in OUTCOMES:
        raise ReportError(
            f"unknown outcome {outcome!r}",
            where="stats",
            fix=f"use one of: {', '.join(OUTCOMES)}",
        )
    return outcome


def outcome_values(trials: pd.DataFrame, outcome: str) -> pd.Series:
    """Per-trial value of ``outcome`` as float, NaN when unscored or the column is absent.

    ``outcome_only`` is the mean of the outcome metrics (accuracy, goal_accuracy) that
    are scored on that trial; NaN when neither is. ``missingness`` counts the trials
    where it rests on one of the two only.
    """
    check_outcome(outcome)
    if outcome == OUTCOME_ONLY:
        parts = [outcome_values(trials, m) for m in outcome_metrics()]
        stacked = pd.concat(parts, axis=1)
        return stacked.mean(axis=1, skipna=True)  # all-NaN row -> NaN, never 0
    column = outcome if outcome in (COMPOSITE, REWARD, OUTCOME, OUTCOME_PER_PROTOCOL, FINAL_PASS) else metric_column(outcome)
    if column not in trials.columns:
        return pd.Series(np.nan, index=trials.index, dtype=float)
    if outcome == FINAL_PASS:
        return trials[column].map(lambda v: np.nan if v is None or pd.isna(v) else float(bool(v))).astype(float)
    return pd.to_numeric(trials[column], errors="coerce").astype(float)


def check_pass(values: pd.Series | np.ndarray, column: str) -> np.ndarray:
    """``values`` of a pass column as floats, checked to be the decided pass: 1, 0 or NaN.

    A pass is decided once, at grading (``final_pass``); counting a score here would need
    a threshold of its own, so a column holding anything else is an error naming it.
    """
    v = np.asarray(values, dtype=float)
    bad = v[~np.isnan(v) & (v != 0.0) & (v != 1.0)]
    if bad.size:
        raise ReportError(
            f"pass column {column!r} holds {bad.size} value(s) other than 0/1 (first: {bad[0]:g}): a pass is decided "
            "once, at grading, and statistics count it, never a score against a threshold of their own",
            where="stats: pass_outcome",
            fix=f"count {FINAL_PASS!r} (the default), or a column whose values are 1 (pass), 0 (fail) or empty",
        )
    return v


def validate_trials(trials: pd.DataFrame, *, where: str = "trials table") -> None:
    """Raise a ``ReportError`` naming the problem when the table cannot be paired."""
    missing = [c for c in REQUIRED_COLUMNS if c not in trials.columns]
    if missing:
        raise ReportError(
            f"missing columns: {', '.join(missing)}",
            where=where,
            fix="build the table with aces_bench.records.trials.TrialRow (columns: aces_bench.records.trials.table_columns())",
        )
    bad = sorted(set(trials["condition"].dropna().astype(str)) - set(ALL_CONDITIONS))
    if bad or trials["condition"].isna().any():
        shown = bad or ["<empty>"]
        raise ReportError(
            f"unknown condition value(s): {', '.join(shown)}",
            where=f"{where}: column 'condition'",
            fix=f"every row's condition must be one of: {', '.join(ALL_CONDITIONS)}",
        )
    dup = trials.duplicated([*PAIR_KEY, "condition"], keep=False)
    if dup.any():
        first = trials.loc[dup, [*PAIR_KEY, "condition"]].iloc[0]
        # numpy scalars print as np.int64(1); show plain values in the message.
        plain = {k: first[k].item() if hasattr(first[k], "item") else first[k] for k in (*PAIR_KEY, "condition")}
        key = ", ".join(f"{k}={v!r}" for k, v in plain.items())
        raise ReportError(
            f"{int(dup.sum())} rows share a pairing key with another row, first: {key}",
            where=where,
            fix="keep one trial per (pair key, condition): drop duplicate runs or number repeats with distinct attempts",
        )


def build_pairs(trials: pd.DataFrame, outcomes: Sequence[str] = OUTCOMES,
                sides: tuple[str, str] = PAIRED) -> pd.DataFrame:
    """Outer-join the trials of two conditions on ``PAIR_KEY``: the treatment (columns
    ``with_*``) and the control (``base_*``), by default with_skill and baseline.

    A calibration arm is paired the same way (``sides=("null", "baseline")`` gives the
    null lift). Promises: one row per pair key seen on either side, sorted by
    ``PAIR_KEY``; ``lift_<o>`` is NaN unless both sides scored ``o``; no row is dropped.
    """
    validate_trials(trials)
    for o in outcomes:
        check_outcome(o)
    frames = []
    for condition, tag in zip(sides, TAGS, strict=True):
        part = trials.loc[trials["condition"] == condition]
        cols = {k: part[k] for k in PAIR_KEY}
        cols[f"present_{tag}"] = pd.Series(True, index=part.index)
        for source, name in _SIDE_EXTRAS.items():
            if source in part.columns:
                cols[f"{name}_{tag}"] = part[source]
        for o in outcomes:
            cols[f"{tag}_{o}"] = outcome_values(part, o)
        frames.append(pd.DataFrame(cols))
    pairs = frames[0].merge(frames[1], on=list(PAIR_KEY), how="outer", sort=False)
    # Case attributes belong to the key, not to a side: take them from whichever side ran.
    attrs = [c for c in CASE_ATTRS if c in trials.columns]
    if attrs:
        info = trials.loc[trials["condition"].isin(sides), [*PAIR_KEY, *attrs]].drop_duplicates(list(PAIR_KEY))
        pairs = pairs.merge(info, on=list(PAIR_KEY), how="left")
    for tag in SIDES.values():
        pairs[f"present_{tag}"] = pairs[f"present_{tag}"].astype("boolean").fillna(False).astype(bool)
    for o in outcomes:
        pairs[f"lift_{o}"] = pairs[f"with_{o}"] - pairs[f"base_{o}"]
    return pairs.sort_values(list(PAIR_KEY), kind="stable").reset_index(drop=True)


def scored_lifts(pairs: pd.DataFrame, outcome: str) -> pd.DataFrame:
    """The pairs whose ``lift_<outcome>`` is defined (both sides scored)."""
    column = f"lift_{check_outcome(outcome)}"
    if column not in pairs.columns:
        raise ReportError(f"paired frame has no column {column!r}", where="stats", fix="build it with build_pairs(trials, outcomes=...) including this outcome")
    return pairs.loc[pairs[column].notna()]
