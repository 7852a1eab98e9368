"""The calibration arms' comparisons: the instrument measured on itself.

Each arm is one more condition of the same pairing (``aces_bench/core/conditions.py``) and
each comparison is a paired lift computed exactly as the headline is (``lift_table``:
case-clustered t per skill, two-way case x configuration when several configurations
are pooled, Bonferroni-adjusted per-skill intervals), on positive cases:

- ``null``: null minus baseline, the lift of a skill-free arm over itself (A/A). With a
  sound instrument its interval contains 0. Also counted: the pairs whose pass/fail
  verdict (``final_pass``) differs between the two baseline runs.
- ``placebo``: with_skill minus placebo, the lift over a sham skill with the target's
  name and description: what the skill's content adds beyond its presence.
- ``forced``: forced minus with_skill, the discovery gap: what is lost because the
  agent did not find or trust the skill (positive: forcing it in helps).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from aces_bench.core.conditions import CONTROLS
from aces_bench.core.outcomes import OUTCOMES
from aces_bench.records.trials import positive_cases
from aces_bench.stats.lift import ADJUSTED_FIELDS, LIFT_FIELDS, lift_table
from aces_bench.stats.pairing import build_pairs

# arm -> (treatment, control, what the difference is called)
ARM_COMPARISONS: dict[str, tuple[str, str, str]] = {
    "null": ("null", "baseline", "null lift (A/A: the baseline run again)"),
    "placebo": ("with_skill", "placebo", "lift over placebo"),
    "forced": ("forced", "with_skill", "discovery gap (forced minus available)"),
}
FLIP_FIELDS = ("n_flip_known", "n_flipped", "flip_share")
ARM_FIELDS = ("arm", "treatment", "control", "comparison")


def arms_run(trials: pd.DataFrame) -> tuple[str, ...]:
    """The calibration arms with at least one trial in ``trials``, in ``CONTROLS`` order."""
    present = set(trials["condition"].astype(str)) if "condition" in trials.columns else set()
    return tuple(a for a in CONTROLS if a in present)


def _flips(pairs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group: pairs with a pass/fail verdict on both runs, and those whose verdict differs."""
    w = pairs["final_pass_with"] if "final_pass_with" in pairs.columns else pd.Series(None, index=pairs.index)
    b = pairs["final_pass_base"] if "final_pass_base" in pairs.columns else pd.Series(None, index=pairs.index)
    known = w.notna() & b.notna()
    flipped = known & (w.astype("boolean").fillna(False) != b.astype("boolean").fillna(False))
    frame = pairs[list(by)].assign(n_flip_known=known.astype(int), n_flipped=flipped.astype(int))
    if by:
        out = frame.groupby(list(by), sort=True, dropna=False)[["n_flip_known", "n_flipped"]].sum().reset_index()
    else:
        out = pd.DataFrame([{"n_flip_known": int(frame["n_flip_known"].sum()),
                             "n_flipped": int(frame["n_flipped"].sum())}])
    out["flip_share"] = np.where(out["n_flip_known"] > 0, out["n_flipped"] / out["n_flip_known"].clip(lower=1), np.nan)
    return out


def arm_table(trials: pd.DataFrame, *, by: Sequence[str] = (), outcomes: Sequence[str] = OUTCOMES,
              level: float = 0.95) -> pd.DataFrame:
    """One row per (arm that ran, group in ``by``, outcome): the arm's comparison as
    ``LIFT_FIELDS`` + ``ADJUSTED_FIELDS`` (``mean_with`` is the treatment's mean,
    ``mean_base`` the control's), and for the null arm the verdict flips (``FLIP_FIELDS``;
    None for the other arms). Empty (with its columns) when no arm ran."""
    columns = [*ARM_FIELDS, *by, "outcome", *LIFT_FIELDS, *ADJUSTED_FIELDS, *FLIP_FIELDS]
    parts = []
    for arm in arms_run(trials):
        treatment, control, what = ARM_COMPARISONS[arm]
        pairs = positive_cases(build_pairs(trials, outcomes=outcomes, sides=(treatment, control)))
        table = lift_table(pairs, by=by, outcomes=outcomes, level=level)
        table.insert(0, "comparison", what)
        table.insert(0, "control", control)
        table.insert(0, "treatment", treatment)
        table.insert(0, "arm", arm)
        if arm == "null":
            flips = _flips(pairs, by)
            table = table.merge(flips, on=list(by), how="left") if by else table.assign(
                **{k: flips.iloc[0][k] for k in FLIP_FIELDS})
        else:
            table = table.assign(**dict.fromkeys(FLIP_FIELDS))
        parts.append(table[columns])
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)
