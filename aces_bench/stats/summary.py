"""Everything the report shows about a trials table, in one JSON-serialisable model.

``study_stats(trials)`` runs every statistic of this package with one set of settings
and returns a ``StudyStats``. Tables are stored as ``StatTable`` (column names + rows of
plain values, NaN stored as None) so a report can render them or call ``.frame()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from aces_bench.core.conditions import PAIRED
from aces_bench.records.stats import Missingness, StatsSettings, StatTable, StudyStats
from aces_bench.records.trials import CELL_KEY, is_negative_control, positive_cases
from aces_bench.stats.arms import arm_table, arms_run
from aces_bench.stats.bootstrap import bootstrap_table
from aces_bench.stats.controls import false_activation
from aces_bench.stats.correlation import static_lift_correlation
from aces_bench.stats.inference import (
    CASE_CLUSTER,
    CONFIG_CLUSTER,
    TWO_WAY_MIN_CONFIGS,
    cluster_codes,
    clustered_mean,
)
from aces_bench.stats.lift import lift_table, within_cell_sd
from aces_bench.stats.missingness import (
    check_abstentions,
    imputation_bounds,
    imputation_sensitivity,
    one_sided,
    outcome_only_partial,
    scored_by_condition,
    status_counts,
    trajectory_gaps,
)
from aces_bench.stats.pairing import build_pairs, check_outcome, validate_trials
from aces_bench.stats.passk import pass_counts, passk_table
from aces_bench.stats.routing import routing_premium
from aces_bench.stats.significance import design_power, per_skill_tests

GROUPED = {"skill": ("skill",), "harness": ("harness",), "model": ("model",), "workspace_mode": ("workspace_mode",),
           "decoy_set": ("decoy_set",)}


def inference_table(pairs: pd.DataFrame, outcomes: Sequence[str], level: float) -> pd.DataFrame:
    """Per outcome, the pooled lift's interval three ways: two-way case x configuration,
    one-way by case, and (for comparison only) treating every pair as independent.

    ``headline`` marks the one the report leads with: two-way when several configurations
    are pooled (at least ``TWO_WAY_MIN_CONFIGS``), else by case.
    """
    rows = []
    cases = cluster_codes(pairs, CASE_CLUSTER) if len(pairs) else np.zeros(0, int)
    configs = cluster_codes(pairs, CONFIG_CLUSTER) if len(pairs) else np.zeros(0, int)
    n_configs = int(np.unique(configs).size)
    for o in outcomes:
        y = pairs[f"lift_{check_outcome(o)}"].to_numpy(float) if len(pairs) else np.zeros(0)
        variants = [("case", clustered_mean(y, cases, level=level))]
        if n_configs >= TWO_WAY_MIN_CONFIGS:
            variants.insert(0, ("case x configuration", clustered_mean(y, cases, configs, level=level)))
        variants.append(("independent pairs", clustered_mean(y, None, level=level)))
        for i, (name, cm) in enumerate(variants):
            rows.append({"outcome": o, "clustering": name, "headline": i == 0, **cm.model_dump()})
    return pd.DataFrame(rows, columns=["outcome", "clustering", "headline", *clustered_fields()])


def clustered_fields() -> list[str]:
    from aces_bench.records.stats import ClusteredMean

    return list(ClusteredMean.model_fields)


def study_stats(
    trials: pd.DataFrame,
    *,
    settings: StatsSettings | None = None,
    static_scores: pd.DataFrame | Mapping[str, float] | None = None,
    cell_key: Sequence[str] = CELL_KEY,
    counts: pd.DataFrame | None = None,
    activations: pd.DataFrame | None = None,
    checks: pd.DataFrame | None = None,
    routing_trials: pd.DataFrame | None = None,
) -> StudyStats:
    """Compute every statistic for ``trials`` (the tidy trials table) into a ``StudyStats``.

    ``counts`` overrides the per-case pass counts used for pass@k (as from
    ``external.registry_pass_counts``, where rows aggregate several attempts).
    Lift, its inference, tests, routing and power use positive cases; negative controls
    get their own lift table and, given ``activations`` (skill, case_id, activated), a
    false-activation rate. ``checks`` (metric, condition, check, decided) feeds the
    abstention audit. ``routing_trials``: the isolation and group trials the routing
    premium pairs (default ``trials``), for a study whose headline set holds one mode.
    Pure: reads nothing but its arguments. Seeded, so the same input gives the same
    output. Empty or degenerate input yields tables with n = 0 and None statistics.
    """
    s = settings or StatsSettings()
    for o in (*s.outcomes, s.headline_outcome, s.pass_outcome):
        check_outcome(o)
    validate_trials(trials)  # before any filter: an unknown condition is an error, never dropped
    everything = trials
    # The calibration arms are compared in ``controls``; every other statistic is the headline pair's.
    trials = trials.loc[trials["condition"].isin(PAIRED)] if "condition" in trials.columns else trials
    arms = arms_run(everything)
    all_pairs = build_pairs(trials, outcomes=tuple(dict.fromkeys((*s.outcomes, s.headline_outcome, s.pass_outcome))))
    pairs = positive_cases(all_pairs)
    controls = all_pairs.loc[is_negative_control(all_pairs)]
    cell = tuple(cell_key)
    if counts is None:
        counts = pass_counts(trials, success=s.pass_outcome, stop_on_pass=s.stop_on_pass)
    t = StatTable.from_frame
    routing_pairs = pairs
    if routing_trials is not None:
        routing_rows = routing_trials.loc[routing_trials["condition"].isin(PAIRED)]
        routing_pairs = positive_cases(build_pairs(routing_rows, outcomes=(s.headline_outcome,)))
    corr, by_skill = (None, None)
    if static_scores is not None:
        corr, joined = static_lift_correlation(static_scores, pairs, outcome=s.headline_outcome, level=s.level)
        by_skill = t(joined)
    return StudyStats(
        settings=s,
        n_trials=len(everything),
        n_pair_keys=len(all_pairs),
        lift_pooled=t(lift_table(pairs, by=(), outcomes=s.outcomes, level=s.level)),
        inference=t(inference_table(pairs, s.outcomes, s.level)),
        lift_by_group={name: t(lift_table(pairs, by=by, outcomes=s.outcomes, level=s.level))
                       for name, by in GROUPED.items()},
        negative_controls=t(lift_table(controls, by=("skill",), outcomes=s.outcomes, level=s.level)),
        false_activation=t(false_activation(activations, by=("skill",), level=s.level))
        if activations is not None else None,
        lift_by_cell=t(lift_table(pairs, by=cell, outcomes=s.outcomes, level=s.level)),
        lift_by_case_kind=t(lift_table(all_pairs, by=("case_kind", "negative_control"), outcomes=s.outcomes, level=s.level)),
        bootstrap=t(bootstrap_table(pairs, outcomes=s.outcomes, n_resamples=s.n_resamples, seed=s.seed, level=s.level)),
        within_cell_sd=t(within_cell_sd(pairs, by=cell, outcomes=s.outcomes)),
        passk_pooled=t(passk_table(counts, ks=s.ks, by=())),
        passk_by_cell=t(passk_table(counts, ks=s.ks, by=cell)),
        routing_pooled=t(routing_premium(routing_pairs, outcomes=(s.headline_outcome,), n_resamples=s.n_resamples,
                                         seed=s.seed, level=s.level)),
        routing_by_cell=t(routing_premium(routing_pairs, outcomes=(s.headline_outcome,),
                                          by=("skill", "harness", "model"), n_resamples=s.n_resamples, seed=s.seed,
                                          level=s.level)),
        significance=t(per_skill_tests(pairs, outcome=s.headline_outcome, n_permutations=s.n_resamples, seed=s.seed,
                                       pass_outcome=s.pass_outcome)),
        design_power=t(design_power(pairs, outcomes=s.outcomes, target_lift=s.target_lift, alpha=s.alpha, power=s.power)),
        missingness=Missingness(
            scored_by_condition=t(scored_by_condition(trials, outcomes=s.outcomes)),
            status=t(status_counts(trials)),
            trajectories=t(trajectory_gaps(trials)),
            one_sided=t(one_sided(all_pairs, outcomes=s.outcomes)),
            outcome_only_partial=t(outcome_only_partial(trials)),
            sensitivity=t(imputation_sensitivity(pairs, outcomes=s.outcomes, level=s.level)),
            bounds=t(imputation_bounds(pairs, outcomes=s.outcomes, level=s.level)),
            abstentions=t(check_abstentions(checks)) if checks is not None else None,
        ),
        static_correlation=corr,
        static_by_skill=by_skill,
        controls_run=list(arms),
        controls=t(arm_table(everything, by=(), outcomes=s.outcomes, level=s.level)) if arms else None,
        controls_by_skill=t(arm_table(everything, by=("skill",), outcomes=s.outcomes, level=s.level))
        if arms else None,
    )
