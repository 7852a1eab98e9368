"""Routing premium: Skill Lift in a group workspace minus Skill Lift in isolation.

In a group workspace the agent sees decoy skills next to the target and must route to
the right one; in isolation it sees only the target. A negative premium is the price
of routing. Group and isolation pairs are different trials (not matched one to one),
so the normal interval uses the two-sample (Welch) standard error; the bootstrap
resamples clusters jointly so a skill's two arms stay linked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from aces_bench.stats.bootstrap import DEFAULT_RESAMPLES, cluster_bootstrap_difference
from aces_bench.stats.lift import z_value
from aces_bench.stats.pairing import OUTCOME, check_outcome

ROUTING_FIELDS = (
    "outcome", "n_group", "n_isolation", "lift_group", "lift_isolation", "premium", "se", "ci_lo", "ci_hi",
    "cluster_by", "n_clusters", "boot_ci_lo", "boot_ci_hi", "note",
)


def _premium_row(lift: np.ndarray, group: np.ndarray, labels: np.ndarray, outcome: str, cluster_by: Sequence[str],
                 *, n_resamples: int, seed: int, level: float) -> dict:
    """Premium of one group of pairs given aligned arrays (lift, is-group-mode, cluster label)."""
    scored = ~np.isnan(lift)
    g, i = lift[scored & group], lift[scored & ~group]
    row = dict.fromkeys(ROUTING_FIELDS)
    row.update(outcome=outcome, n_group=int(g.size), n_isolation=int(i.size), cluster_by="+".join(cluster_by), n_clusters=0)
    if g.size:
        row["lift_group"] = float(g.mean())
    if i.size:
        row["lift_isolation"] = float(i.mean())
    if not g.size or not i.size:
        row["note"] = "needs scored pairs in both group and isolation mode"
        return row
    row["premium"] = row["lift_group"] - row["lift_isolation"]
    if g.size >= 2 and i.size >= 2:
        se = math.sqrt(g.var(ddof=1) / g.size + i.var(ddof=1) / i.size)
        half = z_value(level) * se
        row.update(se=se, ci_lo=row["premium"] - half, ci_hi=row["premium"] + half)
    else:
        row["note"] = "normal CI needs 2+ pairs per mode"
    boot = cluster_bootstrap_difference(g, labels[scored & group], i, labels[scored & ~group],
                                        n_resamples=n_resamples, seed=seed, level=level)
    row.update(n_clusters=boot.n_clusters, boot_ci_lo=boot.ci_lo, boot_ci_hi=boot.ci_hi)
    if boot.note:
        row["note"] = "; ".join(x for x in (row["note"], f"bootstrap: {boot.note}") if x)
    return row


def routing_premium(
    pairs: pd.DataFrame,
    *,
    outcomes: Sequence[str] = (OUTCOME,),
    by: Sequence[str] = (),
    cluster_by: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Routing premium per group in ``by`` (``()`` pools) and outcome.

    ``cluster_by`` defaults to skills, or to cases when ``by`` already fixes the skill.
    Groups lacking scored pairs in either mode keep a row with a ``note`` and None.
    """
    if cluster_by is None:
        cluster_by = ("case_id",) if "skill" in by else ("skill",)
    group = (pairs["workspace_mode"].astype(str) == "group").to_numpy()
    labels = pairs.groupby(list(cluster_by), dropna=False, sort=True).ngroup().to_numpy()
    members = pairs.groupby(list(by), sort=True, dropna=False).indices if by else {(): np.arange(len(pairs))}
    rows = []
    for key, idx in members.items():
        key = key if isinstance(key, tuple) else (key,)
        for o in outcomes:
            lift = pairs[f"lift_{check_outcome(o)}"].to_numpy(float)[idx]
            row = _premium_row(lift, group[idx], labels[idx], o, cluster_by,
                               n_resamples=n_resamples, seed=seed, level=level)
            rows.append({**dict(zip(by, key, strict=True)), **row})
    return pd.DataFrame(rows, columns=[*by, *ROUTING_FIELDS])
