"""Routing premium: Skill Lift in a group workspace minus Skill Lift in isolation.

In a group workspace the agent sees decoy skills next to the target and must route to
the right one; in isolation it sees only the target. A negative premium is the price
of routing. The same cases run in both modes, so the premium is paired: for each
(skill, case, attempt, harness, model) scored in both modes, group lift minus isolation
lift (one difference per decoy set of the group side). The interval is cluster-robust
by case (``inference.clustered_mean``, t with cases - 1 df) and, as a cross-check, a
bootstrap resampling whole cases of those differences. Keys scored in one mode only
are counted (``n_unmatched_*``), never imputed.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from aces_bench.core.outcomes import OUTCOME
from aces_bench.records.stats import DEFAULT_RESAMPLES
from aces_bench.stats.bootstrap import cluster_bootstrap
from aces_bench.stats.inference import CASE_CLUSTER, cluster_codes, clustered_mean
from aces_bench.stats.pairing import check_outcome

MATCH_KEY = ("skill", "case_id", "attempt", "harness", "model")
ROUTING_FIELDS = (
    "outcome", "n_matched", "n_unmatched_group", "n_unmatched_isolation", "lift_group", "lift_isolation", "premium",
    "se", "ci_lo", "ci_hi", "df", "method", "cluster_by", "n_clusters", "boot_ci_lo", "boot_ci_hi", "note",
)


def matched_premiums(pairs: pd.DataFrame, outcome: str) -> pd.DataFrame:
    """One row per group-mode pair with its isolation twin: ``lift_group``, ``lift_isolation``
    and ``premium`` (their difference, NaN unless both are scored)."""
    column = f"lift_{check_outcome(outcome)}"
    mode = pairs["workspace_mode"].astype(str)
    keep = [*MATCH_KEY, "decoy_set", column]
    group = pairs.loc[mode == "group", keep].rename(columns={column: "lift_group"})
    iso = pairs.loc[mode == "isolation", [*MATCH_KEY, column]].rename(columns={column: "lift_isolation"})
    iso = iso.drop_duplicates(list(MATCH_KEY))
    merged = group.merge(iso, on=list(MATCH_KEY), how="outer", sort=True)
    merged["premium"] = merged["lift_group"] - merged["lift_isolation"]
    return merged.reset_index(drop=True)


def _premium_row(m: pd.DataFrame, outcome: str, *, n_resamples: int, seed: int, level: float) -> dict:
    row = dict.fromkeys(ROUTING_FIELDS)
    both = m["premium"].notna()
    row.update(outcome=outcome, n_matched=int(both.sum()), cluster_by="case", n_clusters=0,
               n_unmatched_group=int((m["lift_group"].notna() & m["lift_isolation"].isna()).sum()),
               n_unmatched_isolation=int((m["lift_isolation"].notna() & m["lift_group"].isna()).sum()))
    if not both.any():
        row["note"] = "needs cases scored in both group and isolation mode"
        return row
    matched = m.loc[both]
    cases = cluster_codes(matched, CASE_CLUSTER)
    cm = clustered_mean(matched["premium"].to_numpy(float), cases, level=level, bounds=(-2.0, 2.0))
    row.update(lift_group=float(matched["lift_group"].mean()), lift_isolation=float(matched["lift_isolation"].mean()),
               premium=cm.estimate, se=cm.se, ci_lo=cm.ci_lo, ci_hi=cm.ci_hi, df=cm.df,
               method=cm.method if cm.ci_lo is not None else None, n_clusters=cm.n_clusters, note=cm.note)
    if cm.ci_lo is not None:
        boot = cluster_bootstrap(matched["premium"].to_numpy(float), cases, n_resamples=n_resamples, seed=seed,
                                 level=level)
        row.update(boot_ci_lo=boot.ci_lo, boot_ci_hi=boot.ci_hi)
    return row


def routing_premium(
    pairs: pd.DataFrame,
    *,
    outcomes: Sequence[str] = (OUTCOME,),
    by: Sequence[str] = (),
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Paired routing premium per group in ``by`` (``()`` pools; columns of ``MATCH_KEY``
    or ``decoy_set``) and outcome. Groups lacking a case scored in both modes keep a row
    with a ``note`` and None."""
    rows = []
    for o in outcomes:
        matched = matched_premiums(pairs, o)
        groups = matched.groupby(list(by), sort=True, dropna=False) if by else [((), matched)]
        for key, part in groups:
            key = key if isinstance(key, tuple) else (key,)
            rows.append({**dict(zip(by, key, strict=True)),
                         **_premium_row(part, o, n_resamples=n_resamples, seed=seed, level=level)})
    return pd.DataFrame(rows, columns=[*by, *ROUTING_FIELDS])
