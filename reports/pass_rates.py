"""First-attempt vs final pass rate per condition, pooled and per skill.

The final pass is the trial's recorded ``final_pass``, decided once at grading
(``aces_bench/core/modes.py``: the outcome at or above the study's ``grading.pass_threshold``;
the author's pass in ``custom_only``); a table where no trial records it has its final pass
unknown, never re-decided here. The first-attempt pass is
``first_attempt_pass``: the case's checks on the first answer the agent produced,
AEVAL's definition (``graders/self_correction.py``): a trial that passed only after
rewriting its answer, an output or the skill passed on self-correction. Rates are over trials where the value is
known; the rest are counted, never scored 0. Attempts skipped under stop-on-pass were
never run and are counted apart from unknowns.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from aces_bench.records.summary import PassRateRow
from aces_bench.records.trials import CONDITIONS, GRADES_REGENERATE

FINAL = "final_pass"
FIRST = "first_attempt_pass"


def _known(values: pd.Series) -> pd.Series:
    return values.map(lambda v: None if pd.isna(v) else bool(v))


NOT_RECORDED = ("unknown: no trial records final_pass (a table written before grading recorded the pass); "
                f"{GRADES_REGENERATE} to decide it")


def final_pass_column(trials: pd.DataFrame) -> tuple[pd.Series, str]:
    """Each trial's final pass (True/False/None) and a label saying where it came from.

    Grading decides the pass from the study's own threshold and mode; a table with no
    ``final_pass`` decided (older than that record) gets every pass unknown and the
    ``NOT_RECORDED`` label, since a reward threshold chosen here could disagree with the
    study's (another ``grading.pass_threshold``, a judged outcome, the author's pass).
    """
    if FINAL in trials.columns and trials[FINAL].notna().any():
        return _known(trials[FINAL]), "final_pass (recorded by grading)"
    return pd.Series(None, index=trials.index, dtype=object), NOT_RECORDED


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


def pass_rates(trials: pd.DataFrame, *, by: Sequence[str] = ()) -> list[PassRateRow]:
    """One row per (group, condition): final and first-attempt pass rates with their counts.

    Pure. Conditions with no trial in a group are left out (nothing to rate).
    """
    final, source = final_pass_column(trials)
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
