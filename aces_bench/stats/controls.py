"""Negative controls, reported apart from the lift.

A negative-control case is one the skill should NOT be used for; its lift is zero by
construction when the skill stays unused, so pooling it into the headline only adds
zeros. What it measures is the false-activation rate: the share of with-skill trials
on negative controls that activated the target skill, with a Wilson score interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from aces_bench.stats.inference import wilson_interval

CONTROL_FIELDS = ("n_trials", "n_known", "n_activated", "n_unknown", "rate", "ci_lo", "ci_hi", "level")


def false_activation(activations: pd.DataFrame, *, by: Sequence[str] = (), level: float = 0.95) -> pd.DataFrame:
    """False-activation rate per group in ``by`` (``()`` pools) with a Wilson interval.

    ``activations``: one row per with-skill trial on a negative control, column
    ``activated`` True/False, or None when it could not be told (counted in
    ``n_unknown``, left out of the rate).
    """
    rows = []
    groups = activations.groupby(list(by), sort=True, dropna=False) if by else [((), activations)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        flags = part["activated"]
        known = flags.notna()
        k = int(flags[known].astype(bool).sum())
        n = int(known.sum())
        lo, hi = wilson_interval(k, n, level=level)
        rows.append({**dict(zip(by, key, strict=True)), "n_trials": len(part), "n_known": n, "n_activated": k,
                     "n_unknown": int((~known).sum()), "rate": k / n if n else None, "ci_lo": lo, "ci_hi": hi,
                     "level": level})
    if not rows and not by:
        rows.append({"n_trials": 0, "n_known": 0, "n_activated": 0, "n_unknown": 0, "rate": None, "ci_lo": None,
                     "ci_hi": None, "level": level})
    return pd.DataFrame(rows, columns=[*by, *CONTROL_FIELDS])
