"""First-attempt vs final pass rate per condition, pooled and per skill.

The final pass is the trial's recorded ``final_pass`` (reward at or above the pass
threshold; the author's pass in ``custom_only`` grading). The first-attempt pass is
``first_attempt_pass``: the case's checks on the first answer the agent produced,
AEVAL's definition (``graders/self_correction.py``): a trial that passed only after
rewriting its answer, an output or the skill passed on self-correction. Rates are over trials where the value is
known; the rest are counted, never scored 0. Attempts skipped under stop-on-pass were
never run and are counted apart from unknowns.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from pydantic import BaseModel, Field

from aces_bench.records.trials import CONDITIONS

FINAL = "final_pass"
FIRST = "first_attempt_pass"


class PassRateRow(BaseModel):
    group: dict[str, str] = Field(description="grouping values; empty when pooled")
    condition: str
    n_trials: int = Field(description="trials of this condition, skipped attempts included")
    n_skipped: int = Field(description="attempts not run (stop-on-pass)")
    n_final_known: int
    n_final_pass: int
    final_rate: float | None = Field(description="n_final_pass / n_final_known; None when nothing is known")
    n_first_known: int
    n_first_pass: int
    first_rate: float | None
    n_passed_after_patch: int = Field(description="final pass, first attempt failed: passed only after self-correction "
                                      "(the answer, an output or the skill changed after the first answer)")
    final_source: str = Field(description="where the final pass came from")


def _known(values: pd.Series) -> pd.Series:
    return values.map(lambda v: None if pd.isna(v) else bool(v))


def final_pass_column(trials: pd.DataFrame, threshold: float) -> tuple[pd.Series, str]:
    """Each trial's final pass (True/False/None) and a label saying where it came from.

    Tables written before ``final_pass`` existed fall back to ``reward >= threshold``.
    """
    if FINAL in trials.columns and trials[FINAL].notna().any():
        return _known(trials[FINAL]), "final_pass (recorded by grading)"
    reward = pd.to_numeric(trials["reward"], errors="coerce") if "reward" in trials else pd.Series(float("nan"), index=trials.index)
    return reward.map(lambda r: None if pd.isna(r) else bool(r >= threshold)), f"reward >= {threshold:g} (no final_pass recorded)"


def _row(part: pd.DataFrame, final: pd.Series, group: dict[str, str], condition: str, source: str) -> PassRateRow:
    skipped = part["status"].astype(str) == "skipped"
    f = final.loc[part.index][~skipped]
    first = _known(part[FIRST])[~skipped] if FIRST in part else pd.Series(None, index=f.index, dtype=object)
    fk, sk = f.dropna(), first.dropna()
    both = pd.DataFrame({"f": f, "s": first}).dropna()
    return PassRateRow(
        group=group, condition=condition, n_trials=len(part), n_skipped=int(skipped.sum()),
        n_final_known=len(fk), n_final_pass=int(fk.astype(bool).sum()),
        final_rate=float(fk.astype(bool).mean()) if len(fk) else None,
        n_first_known=len(sk), n_first_pass=int(sk.astype(bool).sum()),
        first_rate=float(sk.astype(bool).mean()) if len(sk) else None,
        n_passed_after_patch=int((both["f"].astype(bool) & ~both["s"].astype(bool)).sum()),
        final_source=source,
    )


def pass_rates(trials: pd.DataFrame, *, by: Sequence[str] = (), threshold: float = 1.0) -> list[PassRateRow]:
    """One row per (group, condition): final and first-attempt pass rates with their counts.

    Pure. Conditions with no trial in a group are left out (nothing to rate).
    """
    final, source = final_pass_column(trials, threshold)
    rows = []
    groups = [((), trials)] if not by else [
        (k if isinstance(k, tuple) else (k,), part) for k, part in trials.groupby(list(by), sort=True, dropna=False)
    ]
    for key, part in groups:
        group = {b: str(v) for b, v in zip(by, key, strict=True)}
        for condition in CONDITIONS:
            sub = part.loc[part["condition"] == condition]
            if len(sub):
                rows.append(_row(sub, final, group, condition, source))
    return rows
