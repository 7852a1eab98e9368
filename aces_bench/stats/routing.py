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

import pandas as pd

from aces_bench.stats.bootstrap import DEFAULT_RESAMPLES, cluster_bootstrap_difference
from aces_bench.stats.lift import z_value
from aces_bench.stats.pairing import COMPOSITE, check_outcome

ROUTING_FIELDS = (
    "outcome", "n_group", "n_isolation", "lift_group", "lift_isolation", "premium", "se", "ci_lo", "ci_hi",
    "cluster_by", "n_clusters", "boot_ci_lo", "boot_ci_hi", "note",
)


def _premium_row(part: pd.DataFrame, outcome: str, cluster_by: Sequence[str], *,
                 n_resamples: int, seed: int, level: float) -> dict:
    column = f"lift_{outcome}"
    mode = part["workspace_mode"].astype(str)
    g = part.loc[(mode == "group") & part[column].notna()]
    i = part.loc[(mode == "isolation") & part[column].notna()]
    row = dict.fromkeys(ROUTING_FIELDS)
    row.update(outcome=outcome, n_group=len(g), n_isolation=len(i), cluster_by="+".join(cluster_by), n_clusters=0)
    if len(g):
        row["lift_group"] = float(g[column].mean())
    if len(i):
        row["lift_isolation"] = float(i[column].mean())
    if not len(g) or not len(i):
        row["note"] = "needs scored pairs in both group and isolation mode"
        return row
    row["premium"] = row["lift_group"] - row["lift_isolation"]
    if len(g) >= 2 and len(i) >= 2:
        se = math.sqrt(g[column].var(ddof=1) / len(g) + i[column].var(ddof=1) / len(i))
        half = z_value(level) * se
        row.update(se=se, ci_lo=row["premium"] - half, ci_hi=row["premium"] + half)
    else:
        row["note"] = "normal CI needs 2+ pairs per mode"
    labels_g = g[list(cluster_by)].astype(str).agg("\x1f".join, axis=1)
    labels_i = i[list(cluster_by)].astype(str).agg("\x1f".join, axis=1)
    boot = cluster_bootstrap_difference(
        g[column].to_numpy(float), labels_g.to_numpy(object), i[column].to_numpy(float), labels_i.to_numpy(object),
        n_resamples=n_resamples, seed=seed, level=level,
    )
    row.update(n_clusters=boot.n_clusters, boot_ci_lo=boot.ci_lo, boot_ci_hi=boot.ci_hi)
    if boot.note:
        row["note"] = "; ".join(x for x in (row["note"], f"bootstrap: {boot.note}") if x)
    return row


def routing_premium(
    pairs: pd.DataFrame,
    *,
    outcomes: Sequence[str] = (COMPOSITE,),
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
    rows = []
    groups = pairs.groupby(list(by), sort=True, dropna=False) if by else [((), pairs)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        for o in outcomes:
            check_outcome(o)
            row = _premium_row(part, o, cluster_by, n_resamples=n_resamples, seed=seed, level=level)
            rows.append({**dict(zip(by, key, strict=True)), **row})
    return pd.DataFrame(rows, columns=[*by, *ROUTING_FIELDS])

