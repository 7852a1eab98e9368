"""summary.json: the report's numbers in one versioned model, each naming who produced it.

Every statistic comes from ``aces_bench.stats`` (``study_stats``, ``lift_table``); this
module only selects, groups and attributes. Attribution: the agent, model and backend
labels of the trials behind a number, and the grader of its outcome (deterministic
graders, the judge, or the task's verifier).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
from pydantic import BaseModel, Field

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
from aces_bench.core.versioning import VersionedRecord, read_record
from aces_bench.records.trials import CELL_KEY, is_negative_control, positive_cases
from aces_bench.reports.confusion import ConfusionTable, routing_confusion
from aces_bench.reports.limits import LimitsRow
from aces_bench.reports.pass_rates import PassRateRow, pass_rates
from aces_bench.reports.static_live import StaticLiveSection
from aces_bench.run.cost import CostRow
from aces_bench.stats import StudyStats, lift_table
from aces_bench.stats.agreement import AgreementRow
from aces_bench.stats.gate import GateCases, GateVerdict, gate_family, skill_cases
from aces_bench.stats.rates import process_rates
from aces_bench.stats.summary import StatTable

SUMMARY_SCHEMA_VERSION = "1"
SUMMARY_REGENERATE = "rebuild the report (`aces-bench report`)"
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


class Attribution(BaseModel):
    """Who produced a number: the runs behind it and the grader of its outcome."""

    agents: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    backends: list[str] = Field(default_factory=list)
    graders: list[str] = Field(default_factory=list)


class LiftRow(BaseModel):
    group: dict[str, str] = Field(description="grouping values; empty when pooled")
    outcome: str
    n: int
    mean_with: float | None
    mean_base: float | None
    lift: float | None
    sd: float | None = None
    se: float | None = None
    ci_lo: float | None = None
    ci_hi: float | None = None
    n_pos: int = 0
    n_zero: int = 0
    n_neg: int = 0
    median: float | None = None
    share_pos: float | None = None
    n_cases: int | None = None
    df: float | None = None
    ci_method: str | None = Field(default=None, description="how the interval was computed (clustering, df)")
    ci_note: str | None = Field(default=None, description="why there is no interval, or that it was clipped")
    design_effect: float | None = None
    no_variation: bool = False
    adj_ci_lo: float | None = Field(default=None, description="interval at the multiplicity-adjusted level")
    adj_ci_hi: float | None = None
    adjustment: str | None = None
    produced_by: Attribution


class ControlRow(LiftRow):
    """A calibration arm's comparison, computed as the headline lift is (``stats/arms.py``):
    ``lift`` is treatment minus control (``mean_with`` / ``mean_base``)."""

    arm: str = Field(description="null | placebo | forced")
    treatment: str
    control: str
    comparison: str = Field(description="null lift | lift over placebo | discovery gap, in words")
    n_flip_known: int | None = Field(default=None, description="null arm: pairs with a pass/fail verdict on both runs")
    n_flipped: int | None = Field(default=None, description="null arm: of those, pairs whose verdict differs")
    flip_share: float | None = Field(default=None, description="null arm: n_flipped / n_flip_known")


class ArmRow(LiftRow):
    """One arm (or one level of it) computed as the headline is, reported apart from it
    (``reports/analysis.py``): pooled ``lift_table`` over its positive pairs."""

    arm: str = Field(description="the design arm: primary | group | routing_stress | model_slice | ...")
    arm_label: str = Field(description="the arm in words")
    level_by: str = Field(default="", description="what the arm is broken down by: visible skills | model | '' (pooled)")
    level: str | None = Field(default=None, description="the level of level_by this row is for; None when pooled")
    analysis_set: str = Field(description="the trials behind the row, in words")
    n_trials: int = Field(description="trials of the arm (or level), every condition and case")
    stand_in: list[str] = Field(default_factory=list, description="stand-ins behind the number (reports/standin.py)")


class DesignMember(BaseModel):
    """One member folder of the study and the arms it serves (``aces_bench.load``'s member/arm/arms)."""

    member: str
    arm: str = Field(description="the arm its trials count in (the first listing it)")
    arms: list[str] = Field(description="every arm listing it, in design order")
    n_trials: int


class SideBySide(BaseModel):
    """One row of the paper page's side-by-side table (``reports/paper.py``)."""

    section: str
    quantity: str
    reported: float | None
    study: float | None
    n: int | None = None
    note: str = ""
    analysis_set: str = Field(default="", description="the trials (or skills) behind the study's value")
    stand_in: str = Field(default="", description="'stand-in: not comparable with the paper (...)' or ''")


class Counts(BaseModel):
    n_trials: int
    n_by_condition: dict[str, int]
    n_ok: int
    n_scored_by_condition: dict[str, int] = Field(description="trials with the headline outcome scored, per condition")
    failed_by_status: dict[str, int] = Field(description="trials whose status is not ok, by status")
    n_unscored_status_ok: int = Field(description="ran fine but the headline outcome is unscored")
    n_missing_trajectory: int
    n_baseline_saw_target: int = Field(default=0, description="baseline trials whose trace shows the target skill: "
                                       "counted as they ran, flagged")
    n_pair_keys: int
    n_scored_pairs: int = Field(description="pair keys with the headline outcome scored on both sides")
    n_one_sided: int = Field(description="pair keys scored on one side only (headline outcome)")
    n_neither: int = Field(description="pair keys scored on neither side (headline outcome)")


class NoVerdictRow(BaseModel):
    """Why one skill got no verdict, in one sentence with counts, and the fix (reports/no_verdict.py)."""

    skill: str
    verdict: str = Field(description="the gate's word: 'no data' or 'not enough cases'")
    cause: str = Field(description="no decidable check, judge abstained, outcome undecided, too few cases, "
                       "every pair excluded, pairs left out (too few cases decided, the rest excluded), "
                       "no positive case")
    n_trials: int = Field(description="the skill's paired trials on positive cases")
    n_affected: int = Field(description="trials undecided or excluded (too few cases: cases decided)")
    reason: str
    fix: str


class IntentionToTreat(BaseModel):
    """Intention to treat: every scheduled pair of the headline, and what left it out.

    An arm's failures (timeout, agent error, a sandbox that died after the agent started,
    no readable answer, a with-skill trial not shown its target) are in the analysis as
    failures (outcome 0, not passed), and a baseline that saw the target as it ran (both
    flagged); only pairs with a side excluded (infrastructure shown and still failing after
    retries, never run, an outcome no grader could decide) are out,
    counted here by reason, with the lift's worst and best case over them."""

    n_pair_keys: int = Field(description="scheduled pairs of positive cases (headline pair) the design meant to run")
    n_analysed: int = Field(description="of those, pairs with the headline outcome decided on both sides "
                                        "(never more than n_pair_keys)")
    n_excluded: int = Field(description="pairs left out: a side excluded or undecided (n_pair_keys - n_analysed)")
    n_not_run_by_design: int = Field(default=0, description="pairs the design chose not to run (a sequential "
                                     "study's stopped skill, stop-on-pass): not exclusions, never given bounds")
    excluded_trials_by_reason: dict[str, int] = Field(default_factory=dict,
                                                      description="trials left out, by why (both conditions)")
    arm_failures_by_condition: dict[str, int] = Field(default_factory=dict,
                                                      description="trials in the analysis as failures of their arm")
    flagged_trials: dict[str, int] = Field(default_factory=dict, description="trials in the analysis but flagged: "
                                           "with-skill not shown the target (failures), baselines that saw it")
    lift: float | None = None
    lift_worst_case: float | None = Field(default=None, description="every excluded with-skill side failed and "
                                          "every excluded baseline side passed")
    lift_best_case: float | None = None
    lift_per_protocol: float | None = Field(default=None, description="secondary view: finished trials only")
    n_per_protocol: int = 0


class Labels(BaseModel):
    agents: list[str]
    models: list[str]
    backends: list[str]
    judges: list[str]
    harnesses: list[str]
    graders_by_outcome: dict[str, list[str]]


class ReportSummary(VersionedRecord):
    SCHEMA_ARTIFACT: ClassVar[str] = "report summary"
    SCHEMA_VERSION: ClassVar[str] = SUMMARY_SCHEMA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = SUMMARY_REGENERATE

    source: str = Field(description="what was reported: an aces-bench study, or external data")
    headline_outcome: str
    labels: Labels
    counts: Counts
    pooled: list[LiftRow]
    by_skill: list[LiftRow]
    by_harness: list[LiftRow]
    by_model: list[LiftRow]
    by_workspace_mode: list[LiftRow]
    by_decoy_set: list[LiftRow] = Field(default_factory=list, description="per decoy set (routing stress sweeps)")
    by_cell: list[LiftRow]
    routing_premium: list[dict[str, Any]] = Field(description="group minus isolation lift, pooled, with CIs")
    routing_premium_by_cell: list[dict[str, Any]]
    pass_rates: list[PassRateRow] = Field(default_factory=list,
                                          description="final vs first-attempt pass rate per condition, pooled")
    pass_rates_by_skill: list[PassRateRow] = Field(default_factory=list)
    process_rates: list[dict[str, Any]] = Field(
        default_factory=list, description="with-skill activation and script-execution rates with Wilson intervals: "
        "process the baseline cannot earn by construction, so reported as rates, not lifts")
    process_rates_by_skill: list[dict[str, Any]] = Field(default_factory=list)
    static_vs_live: StaticLiveSection | None = Field(
        default=None, description="static scan of the target skills against their live lift; None for external data")
    stats: StudyStats = Field(description="every statistic, as aces_bench.stats computed it")
    cost_by_arm: list[CostRow] = Field(
        default_factory=list, description="tokens and cost per condition (aces_bench.run.cost.cost_by_arm): metered "
        "at the host-side metering proxy where the trial had one, else the harness's own claim, and which it is")
    visible_skills: list[dict[str, Any]] = Field(
        default_factory=list, description="the skills each harness showed its model, per condition: one row per "
        "distinct listing with its trial count (aces_bench.agents.traces); skills '' = none, None = not recorded")
    unreviewed_drafts: dict[str, list[str]] = Field(
        default_factory=dict,
        description="per skill, the headline cases that are drafts nobody has reviewed (status: draft, run with "
        "skill.accept_drafts=true): that skill's verdict rests on unreviewed cases; empty when every case was reviewed")
    stopped_by_cost_cap: str | None = Field(
        default=None, description="why the study stopped before running every trial (study.max_cost_usd), else None")
    stopped_by_disk_cap: str | None = Field(
        default=None, description="why the study stopped before running every trial (study.max_output_gb), else None")
    usd_per_lift_point: float | None = Field(
        default=None, description="extra mean cost per with-skill trial per percentage point of headline lift")
    limits_in_force: list[LimitsRow] = Field(
        default_factory=list, description="run conditions: the memory, CPU, disk and network limits the trials ran "
        "under, as the backend recorded them ('not enforced' where it could not), with trial counts")
    # Optional within version 1: a summary written before calibration arms existed ran none.
    controls_run: list[str] = Field(default_factory=list, description="calibration arms that ran (study.controls)")
    controls: list[ControlRow] = Field(
        default_factory=list, description="per arm and outcome, pooled over positive cases: null lift with verdict "
        "flips, lift over placebo, discovery gap")
    controls_by_skill: list[ControlRow] = Field(default_factory=list, description="the same per skill")
    judge_agreement: list[AgreementRow] = Field(
        default_factory=list, description="a judge panel (judge.models): per judged metric, ICC(A,1) with its "
        "interval and Cohen's kappa per pair of judges (reports/judge_agreement.py)")
    routing_confusion: list[ConfusionTable] = Field(
        default_factory=list, description="group-mode studies: per skill, harness, model, decoy set and condition, "
        "which skill fired for the skill each case was meant for (reports/confusion.py)")
    # Optional within version 1: a summary written before the gate was one rule has none.
    intention_to_treat: IntentionToTreat | None = Field(
        default=None, description="the pairs analysed, the ones excluded by reason, the worst-case bound")
    gate_cases: list[GateCases] = Field(default_factory=list, description="per skill, the plain per-case data the "
                                        "gate reads (aces_bench/stats/gate.py): any threshold can be re-gated")
    gate: list[GateVerdict] = Field(default_factory=list, description="per skill, the gate's verdict at the "
                                    "study's settings (study.gate): the report's verdict column")
    no_verdict: list[NoVerdictRow] = Field(
        default_factory=list, description="per skill without a verdict: why, with counts, and the fix")
    # Optional within version 1: a summary written before analysis sets were named pooled every arm.
    analysis_set: str = Field(default="", description="the trials every headline number is computed on, in words "
                              "(the primary arm, positive cases; reports/analysis.py)")
    arms: list[ArmRow] = Field(default_factory=list, description="every arm of the study (and level of an arm) "
                               "computed as the headline is, reported apart from it")
    stand_in: list[str] = Field(default_factory=list, description="stand-ins behind the headline (reference agent, "
                                "heuristic judge, offline model): its numbers are not comparable with the paper's")
    design: list[DesignMember] = Field(default_factory=list, description="every member of the study and its arms")
    side_by_side: list[SideBySide] = Field(default_factory=list, description="the ACES paper's reported values "
                                           "beside this study's (when the report has the paper page)")
    sequential: list[dict[str, Any]] = Field(
        default_factory=list, description="sequential studies (study.sequential=true): per skill, when and why it "
        "stopped and its repeated (anytime-valid) interval; empty for fixed studies")
    baseline_reuse: list[dict[str, Any]] = Field(
        default_factory=list, description="per study folder: baseline and null trials reused from the store, and "
        "how old they were")

    def control(self, arm: str, outcome: str, skill: str | None = None) -> ControlRow | None:
        """The arm's row for ``outcome``, pooled or for ``skill``; None when the arm did not run."""
        rows = self.controls if skill is None else [r for r in self.controls_by_skill if r.group.get("skill") == skill]
        return next((r for r in rows if r.arm == arm and r.outcome == outcome), None)


def read_summary(path: Path) -> ReportSummary:
    """A stored summary.json, validated (and migrated); a bad or newer file is a ReportError."""
    return read_record(ReportSummary, path, what="report summary", regenerate=SUMMARY_REGENERATE)


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


SCHEMA_FILE = "summary.schema.json"


def summary_schema() -> dict[str, Any]:
    """The JSON Schema of summary.json (what ``read_summary`` accepts), from ``ReportSummary``.

    Shipped as ``aces_bench/reports/summary.schema.json`` and written beside every
    summary.json; ``tools/summary_schema.py`` regenerates the shipped copy and the tests
    check it has not drifted from the model.
    """
    schema = ReportSummary.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://aces-bench/summary.schema.json",
            "title": "aces-bench report summary.json", **schema}
