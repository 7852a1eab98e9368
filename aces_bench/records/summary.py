"""summary.json: the study's statistics and verdicts in one versioned record, each number
naming who produced it.

``aces_bench.analysis`` computes it (statistics from ``aces_bench.stats``, verdicts from
its gate, the static scan, the trajectories' confusion tables); the report and the paper
page only render it, and ``aces-bench report --fail-under-lift`` re-gates its
``gate_cases``. Attribution: the agent, model and backend labels of the trials behind a
number, and the grader of its outcome (deterministic graders, the judge, or the task's
verifier).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from aces_bench.core.versioning import VersionedRecord, read_record
from aces_bench.records.gate import GateCases, GateVerdict
from aces_bench.records.stats import AgreementRow, Correlation, StudyStats


class CostRow(BaseModel):
    """Tokens and cost of one condition: a row of summary.json's ``cost_by_arm``."""

    condition: str
    n_trials: int
    input_tokens: int = Field(description="metered tokens where the trial was metered, else the harness's claim")
    output_tokens: int
    n_costed: int = Field(description="trials with a known cost; the others are never counted as $0")
    cost_usd: float | None
    mean_cost_usd: float | None
    n_metered: int = Field(default=0, description="trials whose usage the host-side metering proxy measured")
    n_claimed: int = Field(default=0, description="trials whose usage is only the harness's own claim")
    n_no_model: int = Field(default=0, description="trials that made no model call (reference agent)")
    n_usage_mismatch: int = Field(default=0, description="metered trials whose harness claimed other usage")
    usage: str = Field(default="", description="where the figures come from, in words")


class PassRateRow(BaseModel):
    group: dict[str, str] = Field(description="grouping values; empty when pooled")
    condition: str
    n_trials: int = Field(description="trials of this condition, skipped attempts included")
    n_skipped: int = Field(description="attempts not run (stop-on-pass)")
    n_final_known: int
    n_final_pass: int
    final_rate: float | None = Field(description="n_final_pass / n_final_known; None when nothing is known")
    n_first_known: int
    n_first_pass: int
    first_rate: float | None
    n_passed_after_patch: int = Field(description="final pass, first attempt failed: passed only after self-correction "
                                      "(the answer, an output or the skill changed after the first answer)")
    final_source: str = Field(description="where the final pass came from")


class ConfusionTable(BaseModel):
    group: dict[str, str]
    rows: list[str] = Field(description="expected skill per case (visible), then (none)")
    columns: list[str] = Field(description="every visible skill, anything else that fired, (none), (failed)")
    counts: list[list[int]] = Field(description="counts[row][column]: trials")
    n_trials: int
    n_decided: int = Field(description="trials whose trajectory says what fired (not (failed))")
    n_right: int = Field(description="decided trials where the skill meant fired, or none when none was meant")
    routing_accuracy: float | None
    routing_ci: tuple[float, float] | None = None


class LimitsRow(BaseModel):
    """One set of limits in force, and how many trials ran under it."""

    backend: str
    n_trials: int
    memory: str
    cpus: str
    disk: str
    network: str
    processes: str = "not recorded"
    isolation: str = "not recorded"
    note: str | None = Field(default=None, description="why the limits are not stated per limit")


class ScannedSkill(BaseModel):
    skill: str = Field(description="the skill's name in the trials table")
    path: str
    status: str = Field(description="scanned | skipped | error")
    reason: str | None = None
    structural: float | None = Field(default=None, description="Tier 1 overall score, 0-100")
    grade: str | None = None
    rubric: float | None = Field(default=None, description="Tier 2 mean over judges, 0-100; None when not run")


class StaticLiveSection(BaseModel):
    """What the report says about static vs live, including why parts did not run."""

    status: str = Field(description="ran | skipped")
    reason: str | None = Field(default=None, description="why it was skipped, or caveats when it ran")
    outcome: str
    skills: list[ScannedSkill] = Field(default_factory=list)
    tier1: Correlation | None = None
    tier2: Correlation | None = None
    tier2_status: str = Field(description="ran (judge labels) or why Tier 2 did not run")
    caveat: str | None = Field(default=None, description="small-n warning shown next to the correlation")
    profile: str | None = Field(default=None, description="the Tier 1 rule profile the scores come from "
                                "(study.static_profile: aces | skillevaluator)")


SUMMARY_SCHEMA_VERSION = "1"


SUMMARY_REGENERATE = "rebuild the report (`aces-bench report`)"


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
