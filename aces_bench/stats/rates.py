"""With-skill process rates: what the skill arm did that the baseline cannot do by construction.

Activation (the target's SKILL.md read, or a harness activation call) and script
execution (the case's expected script ran cleanly) are unavailable to a baseline that
has no skill staged, so a "lift" on them measures the skill's presence, not its effect.
They are reported as rates over the finished with-skill trials, with a Wilson interval.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from aces_bench.records.trials import is_negative_control
from aces_bench.stats.inference import wilson_interval

PROCESS = {"activation": "activated", "script_execution": "script_ran"}
"""Process rate name -> trials-table column (bool, None where not applicable)."""
RATE_FIELDS = ("process", "n", "k", "rate", "ci_lo", "ci_hi")


def process_rates(trials: pd.DataFrame, *, by: Sequence[str] = (), level: float = 0.95) -> pd.DataFrame:
    """Per group in ``by`` and process: finished with-skill trials on positive cases where it applies (n), where it
    happened (k), the rate and its Wilson interval. A table without the columns gives n = 0."""
    # Negative controls are left out: there the process not happening is right (their
    # false-activation rate is stats/controls.py's).
    ok = trials.loc[(trials["condition"] == "with_skill") & (trials["status"] == "ok") & ~is_negative_control(trials)]
    groups = [((), ok)] if not by else [
        (k if isinstance(k, tuple) else (k,), part) for k, part in ok.groupby(list(by), sort=True, dropna=False)]
    rows = []
    for key, part in groups:
        for name, column in PROCESS.items():
            values = part[column].dropna().astype(bool) if column in part else pd.Series(dtype=bool)
            n, k = int(values.size), int(values.sum())
            lo, hi = wilson_interval(k, n, level=level)
            rows.append({**dict(zip(by, key, strict=True)), "process": name, "n": n, "k": k,
                         "rate": k / n if n else None, "ci_lo": lo, "ci_hi": hi})
    return pd.DataFrame(rows, columns=[*by, *RATE_FIELDS])
