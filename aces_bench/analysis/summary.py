"""Build summary.json (``aces_bench.records.summary.ReportSummary``): the report's numbers,
each naming who produced it.

Every statistic comes from ``aces_bench.stats`` (``study_stats``, ``lift_table``); this
module only selects, groups and attributes. Attribution: the agent, model and backend
labels of the trials behind a number, and the grader of its outcome (deterministic
graders, the judge, or the task's verifier).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from aces_bench.analysis.confusion import routing_confusion
from aces_bench.analysis.sets import AnalysisSet, AnalysisSets, level_pairs, levels, pooled
from aces_bench.core.gate import GateSettings
from aces_bench.core.metrics import metric_names, outcome_metrics
from aces_bench.core.modes import ARM_FAILURES
from aces_bench.core.outcomes import (
    COMPOSITE,
    FINAL_PASS,
    OUTCOME,
    OUTCOME_ONLY,
    OUTCOME_PER_PROTOCOL,
    OUTCOMES,
    REWARD,
)
from aces_bench.records.gate import GateCases
from aces_bench.records.stats import AgreementRow, StatTable, StudyStats
from aces_bench.records.summary import (
    Attribution,
    ControlRow,
    Counts,
    IntentionToTreat,
    Labels,
    LiftRow,
    LimitsRow,
    ReportSummary,
    StaticLiveSection,
)
from aces_bench.records.trials import CELL_KEY, is_negative_control, positive_cases
from aces_bench.reports.pass_rates import pass_rates
from aces_bench.stats import lift_table
from aces_bench.stats.gate import gate_family, skill_cases
from aces_bench.stats.rates import process_rates

DETERMINISTIC_GRADER = "deterministic graders (aces-bench)"
VERIFIER = "task verifier (tests/test.sh)"
GROUPINGS: dict[str, tuple[str, ...]] = {
    "skill": ("skill",),
    "harness": ("harness",),
    "model": ("model",),
    "workspace_mode": ("workspace_mode",),
    "decoy_set": ("decoy_set",),
    "cell": CELL_KEY,
}
LABEL_COLUMNS = {"agents": "agent_label", "models": "model", "backends": "backend", "judges": "judge_label"}


def _distinct(values: pd.Series) -> list[str]:
    return sorted({str(v) for v in values.dropna().tolist() if str(v).strip()})


def graders_by_outcome(trials: pd.DataFrame, grader_labels: dict[str, set[str]] | None = None) -> dict[str, list[str]]:
    """The grader of each outcome: recorded labels from grades when known, else by kind of metric."""
    judges = _distinct(trials["judge_label"]) if "judge_label" in trials.columns else []
    recorded = grader_labels or {}
    out: dict[str, list[str]] = {}
    def full(label: str) -> str:
        # Graders record a judge's short label ("heuristic"); the table carries its full one.
        if label == "deterministic":
            return DETERMINISTIC_GRADER
        return next((j for j in judges if j == label or j.startswith(f"{label} ")), label)

    for m in metric_names():
        if recorded.get(m):
            out[m] = sorted({full(g) for g in recorded[m]})
        elif m in metric_names("deterministic"):
            out[m] = [DETERMINISTIC_GRADER]
        else:
            out[m] = [f"judge: {j}" for j in judges] or ["judge (label not recorded)"]
    out[REWARD] = [VERIFIER]
    out[OUTCOME_ONLY] = sorted({g for m in outcome_metrics() for g in out[m]})
    out[COMPOSITE] = sorted({g for m in metric_names() for g in out[m]})
    out[OUTCOME] = sorted({*out[REWARD], *out[OUTCOME_ONLY]})
    out[OUTCOME_PER_PROTOCOL] = out[OUTCOME]
    out[FINAL_PASS] = out[OUTCOME]
    return out


def _producers(part: pd.DataFrame) -> dict[str, list[str]]:
    """The agents, models and backends of a group's trials (the same for each of its outcomes)."""
    return {"agents": _distinct(part["agent_label"]) if "agent_label" in part else [],
            "models": _distinct(part["model"]),
            "backends": _distinct(part["backend"]) if "backend" in part else []}


def lift_rows(table: pd.DataFrame, by: Sequence[str], trials: pd.DataFrame,
              graders: dict[str, list[str]]) -> list[LiftRow]:
    """``lift_table`` rows as ``LiftRow``s, each attributed to the trials of its group."""
    rows = []
    groups = {(): trials} if not by else {
        (k if isinstance(k, tuple) else (k,)): part for k, part in trials.groupby(list(by), sort=True, dropna=False)
    }
    producers: dict[tuple, dict[str, list[str]]] = {}  # per group: the table has a row per outcome of each
    for rec in table.to_dict("records"):
        key = tuple(rec[b] for b in by)
        if key not in producers:
            producers[key] = _producers(groups.get(key, trials.iloc[0:0]))
        values = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}
        rows.append(LiftRow(
            group={b: str(rec[b]) for b in by}, outcome=rec["outcome"],
            **{k: values[k] for k in LiftRow.model_fields if k in values and k not in ("group", "outcome")},
            produced_by=Attribution(**{k: list(v) for k, v in producers[key].items()},
                                    graders=graders.get(rec["outcome"], [])),
        ))
    return rows


def control_rows(table: StatTable | None, by: Sequence[str], trials: pd.DataFrame,
                 graders: dict[str, list[str]]) -> list[ControlRow]:
    """The arm comparisons of ``study_stats`` as ``ControlRow``s, each attributed to the
    trials of its two conditions."""
    if table is None:
        return []
    frame = table.frame()
    out: list[ControlRow] = []
    for arm, part in frame.groupby("arm", sort=False):
        first = part.iloc[0]
        sides = trials.loc[trials["condition"].isin([first["treatment"], first["control"]])]
        extra = ("arm", "treatment", "control", "comparison", "n_flip_known", "n_flipped", "flip_share")
        for row, rec in zip(lift_rows(part.drop(columns=list(extra)), by, sides, graders),
                            part.to_dict("records"), strict=True):
            flips = {k: (None if rec[k] is None or (isinstance(rec[k], float) and math.isnan(rec[k])) else rec[k])
                     for k in extra[4:]}
            out.append(ControlRow(**row.model_dump(), arm=str(arm), treatment=rec["treatment"], control=rec["control"],
                                  comparison=rec["comparison"],
                                  n_flip_known=None if flips["n_flip_known"] is None else int(flips["n_flip_known"]),
                                  n_flipped=None if flips["n_flipped"] is None else int(flips["n_flipped"]),
                                  flip_share=flips["flip_share"]))
    return out


def counts(trials: pd.DataFrame, stats: StudyStats) -> Counts:
    status = trials["status"].astype(str)
    scored = stats.missingness.scored_by_condition.frame()
    head = scored.loc[scored["outcome"] == stats.settings.headline_outcome]
    sided = stats.missingness.one_sided.frame()
    sided = sided.loc[sided["outcome"] == stats.settings.headline_outcome]
    one = sided.iloc[0] if len(sided) else None
    has = trials["has_trajectory"].fillna(False).astype(bool) if "has_trajectory" in trials else pd.Series(False, index=trials.index)
    return Counts(
        n_trials=len(trials),
        n_by_condition={str(k): int(v) for k, v in trials["condition"].value_counts().sort_index().items()},
        n_ok=int((status == "ok").sum()),
        n_scored_by_condition={str(r["condition"]): int(r["n_scored"]) for r in head.to_dict("records")},
        failed_by_status={str(k): int(v) for k, v in status[status != "ok"].value_counts().sort_index().items()},
        n_unscored_status_ok=int(head["n_unscored_status_ok"].sum()) if len(head) else 0,
        n_missing_trajectory=int((~has).sum()),
        n_baseline_saw_target=int(trials["baseline_saw_target"].eq(True).sum())
        if "baseline_saw_target" in trials else 0,
        n_pair_keys=stats.n_pair_keys,
        n_scored_pairs=int(one["n_both"]) if one is not None else 0,
        n_one_sided=int(one["n_with_only"] + one["n_base_only"]) if one is not None else 0,
        n_neither=int(one["n_neither"]) if one is not None else 0,
    )


def visible_skills_rows(trials: pd.DataFrame) -> list[dict[str, Any]]:
    """Per harness and condition, each distinct list of skills the model was shown, with
    its trial count and how many of those trials listed their target."""
    if "visible_skills" not in trials or not len(trials):
        return []
    counts: dict[tuple[str, str, str | None], list[int]] = {}
    listed = trials["target_listed"] if "target_listed" in trials else pd.Series([None] * len(trials))
    for harness, condition, shown, hit in zip(trials["harness"].astype(str), trials["condition"].astype(str),
                                              trials["visible_skills"], listed, strict=True):
        key = (harness, condition, None if shown is None or pd.isna(shown) else str(shown))
        n = counts.setdefault(key, [0, 0])
        n[0] += 1
        n[1] += bool(hit is True or (hit is not None and not pd.isna(hit) and bool(hit)))
    return [{"harness": h, "condition": c, "skills": shown, "n_trials": n, "n_target_listed": k}
            for (h, c, shown), (n, k) in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], -kv[1][0],
                                                                              str(kv[0][2])))]


def excluded_reason(row: dict) -> str | None:
    """Why a paired trial is left out of the headline (None: it is analysed, or an arm failure)."""
    from aces_bench.run.collect import provider_failure  # collect brings Harbor's trial models and the emitters

    cls = row.get("trial_class")
    if cls == "excluded" and row.get("baseline_saw_target") is True:
        return "baseline saw the target skill (a record graded before it counted as it ran)"
    status = str(row.get("status"))
    if status == "infra_error":
        if provider_failure(status, row.get("failure_cause")):
            return "model provider error (after retries; the gate reads a with-skill one as not passed)"
        return "infrastructure (after retries)"
    if status == "not_run":
        return "never run"
    if status == "setup_error" and cls == "excluded":
        return "setup: the arm was not what it claims (a record graded before it counted as a failure)"
    if status == "skipped":
        return None  # stop-on-pass: an attempt after a pass, not scheduled
    if cls == "arm_failure" or status in ARM_FAILURES:
        return None
    outcome = row.get("outcome")
    if outcome is None or (isinstance(outcome, float) and math.isnan(outcome)):
        return "outcome undecided (no reward, or the graders abstained)"
    return None


TARGET_NOT_SHOWN = "with-skill trial(s) not shown the target skill, counted as failures"
BASELINE_SAW_TARGET = "baseline trial(s) that saw the target skill, counted as they ran"


def _flag(row: dict) -> str | None:
    """Why a trial in the analysis is flagged: a with-skill one not shown its target (a
    failure), a baseline that saw it (as it ran)."""
    if str(row.get("status")) == "setup_error":
        return TARGET_NOT_SHOWN
    if row.get("baseline_saw_target") is True:
        return BASELINE_SAW_TARGET
    return None


def intention_to_treat(trials: pd.DataFrame, stats: StudyStats) -> IntentionToTreat:
    """The intention-to-treat accounting of the headline (``IntentionToTreat``)."""
    head = stats.settings.headline_outcome
    paired = trials.loc[trials["condition"].isin(("with_skill", "baseline")) & ~is_negative_control(trials)]
    reasons: dict[str, int] = {}
    failures: dict[str, int] = {}
    flagged: dict[str, int] = {}
    for rec in paired.to_dict("records"):
        why = excluded_reason(rec)
        if why:
            reasons[why] = reasons.get(why, 0) + 1
            continue
        if str(rec.get("status")) in ARM_FAILURES:
            failures[str(rec["condition"])] = failures.get(str(rec["condition"]), 0) + 1
        flag = _flag(rec)
        if flag:
            flagged[flag] = flagged.get(flag, 0) + 1
    pooled = {r["outcome"]: r for r in stats.lift_pooled.rows}
    bounds = next((r for r in (stats.missingness.bounds.rows if stats.missingness.bounds else [])
                   if r["outcome"] == head), {})
    # Both counts from the one table of positive pairs the design meant to run (the
    # one-sided audit also counts should-not-use cases: analysed could exceed scheduled).
    n_keys = int(bounds.get("n_keys") or 0)
    n_both = int(bounds.get("n_observed") or 0)
    pp = pooled.get(OUTCOME_PER_PROTOCOL, {})
    return IntentionToTreat(n_pair_keys=n_keys, n_analysed=n_both, n_excluded=n_keys - n_both,
                            n_not_run_by_design=int(bounds.get("n_not_run_by_design") or 0),
                            excluded_trials_by_reason=dict(sorted(reasons.items())),
                            arm_failures_by_condition=dict(sorted(failures.items())),
                            flagged_trials=dict(sorted(flagged.items())),
                            lift=pooled.get(head, {}).get("lift"), lift_worst_case=bounds.get("lift_lower"),
                            lift_best_case=bounds.get("lift_upper"), lift_per_protocol=pp.get("lift"),
                            n_per_protocol=int(pp.get("n") or 0))


def gate_inputs(trials: pd.DataFrame, stats: StudyStats, activations: pd.DataFrame | None = None) -> list[GateCases]:
    """Per skill, the gate's plain per-case data (with the false-activation counts shown beside it;
    ``activations``, one row per with-skill trial on a negative control, finds the ones that
    activated the skill and failed)."""
    fa = {}
    if stats.false_activation is not None:
        fa = {str(r["skill"]): (int(r["n_activated"]), int(r["n_known"])) for r in stats.false_activation.rows
              if r.get("n_known")}
    out = []
    for skill in sorted(trials["skill"].astype(str).unique()) if len(trials) else []:
        cases = skill_cases(trials, skill, activations=activations)
        out.append(cases.model_copy(update={"false_activation": fa.get(skill)}))
    return out


def unreviewed_drafts(trials: pd.DataFrame) -> dict[str, list[str]]:
    """Per skill, the sorted ids of the cases still marked draft (a trials table without the column: none)."""
    if "case_unreviewed" not in trials or not len(trials):
        return {}
    drafts = trials[trials["case_unreviewed"].fillna(False).astype(bool)]
    return {str(skill): sorted({str(c) for c in group["case_id"]}) for skill, group in drafts.groupby("skill")}


def build_summary(
    trials: pd.DataFrame,
    pairs: pd.DataFrame,
    stats: StudyStats,
    *,
    source: str,
    grader_labels: dict[str, set[str]] | None = None,
    static_vs_live: StaticLiveSection | None = None,
    with_pass_rates: bool = True,
    limits_in_force: list[LimitsRow] | None = None,
    visible: dict[str, list[str]] | None = None,
    judge_agreement: list[AgreementRow] | None = None,
    gate_settings: GateSettings | None = None,
    confusion_trials: pd.DataFrame | None = None,
    activations: pd.DataFrame | None = None,
) -> ReportSummary:
    """The summary of one study from its trials, paired frame and ``study_stats`` result.

    ``with_pass_rates=False`` for external data whose rows are not single trials (a
    pass rate over aggregated rewards would be meaningless). ``confusion_trials``: the
    trials the routing confusion reads when they are not ``trials`` (a design's headline
    set is its isolation arm; its group-mode trials are in other arms).
    """
    graders = graders_by_outcome(trials, grader_labels)
    outcomes = tuple(o for o in stats.settings.outcomes if o in OUTCOMES)
    level = stats.settings.level
    positive = trials.loc[~is_negative_control(trials)]

    def grouped(name: str) -> list[LiftRow]:
        # The stats model computed these once (positive cases); the same table feeds the HTML.
        by = GROUPINGS[name]
        table = stats.lift_by_group.get(name)
        frame = table.frame() if table is not None else lift_table(positive_cases(pairs), by=by, outcomes=outcomes,
                                                                   level=level)
        return lift_rows(frame, by, trials, graders)

    from aces_bench.run.cost import cost_by_arm

    pooled = lift_rows(stats.lift_pooled.frame(), (), trials, graders)
    # The gate reads single trials' pass: external data whose rows aggregate attempts has none.
    cases = gate_inputs(trials, stats, activations) if with_pass_rates else []
    headline = next((r.lift for r in pooled if r.outcome == stats.settings.headline_outcome), None)
    arms, per_point = cost_by_arm(trials, headline)
    return ReportSummary(
        visible_skills=visible_skills_rows(trials),
        unreviewed_drafts=unreviewed_drafts(trials),
        cost_by_arm=arms,
        usd_per_lift_point=per_point,
        source=source,
        headline_outcome=stats.settings.headline_outcome,
        labels=Labels(
            agents=_distinct(trials["agent_label"]) if "agent_label" in trials else [],
            models=_distinct(trials["model"]),
            backends=_distinct(trials["backend"]) if "backend" in trials else [],
            judges=_distinct(trials["judge_label"]) if "judge_label" in trials else [],
            harnesses=_distinct(trials["harness"]),
            graders_by_outcome=graders,
        ),
        counts=counts(trials, stats),
        pooled=pooled,
        by_skill=grouped("skill"),
        by_harness=grouped("harness"),
        by_model=grouped("model"),
        by_workspace_mode=grouped("workspace_mode"),
        by_decoy_set=grouped("decoy_set"),
        by_cell=lift_rows(stats.lift_by_cell.frame(), CELL_KEY, trials, graders),
        routing_premium=stats.routing_pooled.rows,
        routing_premium_by_cell=stats.routing_by_cell.rows,
        # Pass rates on the cases a skill is meant for, like the lift (negative controls pass by not using it).
        pass_rates=pass_rates(positive) if with_pass_rates else [],
        pass_rates_by_skill=pass_rates(positive, by=("skill",)) if with_pass_rates else [],
        process_rates=StatTable.from_frame(process_rates(trials, level=level)).rows,
        process_rates_by_skill=StatTable.from_frame(process_rates(trials, by=("skill",), level=level)).rows,
        static_vs_live=static_vs_live,
        stats=stats,
        limits_in_force=limits_in_force or [],
        controls_run=list(stats.controls_run),
        controls=control_rows(stats.controls, (), trials, graders),
        controls_by_skill=control_rows(stats.controls_by_skill, ("skill",), trials, graders),
        routing_confusion=routing_confusion(trials if confusion_trials is None else confusion_trials, visible),
        judge_agreement=judge_agreement or [],
        intention_to_treat=intention_to_treat(trials, stats) if with_pass_rates else None,
        gate_cases=cases,
        gate=gate_family(cases, gate_settings),
    )


def arm_rows(sets: AnalysisSets, outcomes: tuple[str, ...], level: float, graders: dict[str, list[str]],
             offline_runs: set[str] | frozenset[str] = frozenset()) -> list:
    """One ``ArmRow`` per arm (per level for routing stress and the model slice) and outcome,
    each computed as the headline is; the headline arm's row equals the headline."""
    from aces_bench.analysis.standin import stand_ins
    from aces_bench.records.summary import ArmRow

    rows = []
    # The headline arm first: its row equals the headline (a check a reader can make).
    for name, s in sorted(sets.arms.items(), key=lambda kv: kv[0] != sets.headline.name):
        if s.empty:
            continue
        by, values = levels(s)
        for value in values or [None]:
            pairs = s.pairs if value is None else level_pairs(s, value)
            trials = s.trials if value is None else _level_trials(s, by, value)
            table = pooled(pairs, outcomes, level)
            for row in lift_rows(table, (), trials, graders):
                group = {"arm": name, **({by: str(value)} if value is not None else {})}
                rows.append(ArmRow(**{**row.model_dump(), "group": group}, arm=name, arm_label=s.label, level_by=by,
                                   level=None if value is None else str(value), analysis_set=s.description,
                                   n_trials=len(trials), stand_in=stand_ins(trials, offline_runs, row.outcome)))
    return rows


def _level_trials(s: AnalysisSet, by: str, value) -> pd.DataFrame:
    t = s.trials
    if by == "model":
        return t.loc[t["model"].astype(str) == str(value)]
    if by == "visible skills":
        # A level is what the with-skill trial saw; every condition of its pair key (negative
        # controls too) belongs to it.
        from aces_bench.records.trials import PAIR_KEY

        seen = t.loc[(t["condition"] == "with_skill") & (t["n_visible_skills"].astype("Float64") == float(value)),
                     list(PAIR_KEY)]
        return t.merge(seen.drop_duplicates(), on=list(PAIR_KEY), how="inner")
    return t
