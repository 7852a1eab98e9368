"""The study's statistics as stored: ``StudyStats`` and the result types inside it.

``aces_bench.stats`` computes them (``study_stats``, ``spearman_ci``, ``clustered_mean``,
``panel_agreement``, ``skillsbench_headline``); the report and the paper page read them
from here, so rendering a number needs no statistics code.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from aces_bench.core.outcomes import FINAL_PASS, OUTCOME, outcomes
from aces_bench.core.versioning import VersionedRecord

DEFAULT_RESAMPLES = 10_000


STATS_SCHEMA_VERSION = "1"


Scalar = float | int | str | bool | None


def _plain(value: Any) -> Scalar:
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class StatTable(BaseModel):
    """A tidy table: ordered column names and one dict per row (None = not defined)."""

    columns: list[str]
    rows: list[dict[str, Scalar]]

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> StatTable:
        cols = [str(c) for c in frame.columns]
        rows = [{c: _plain(v) for c, v in zip(cols, rec, strict=True)} for rec in frame.itertuples(index=False, name=None)]
        return cls(columns=cols, rows=rows)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=self.columns)


class StatsSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # final_pass is counted by pass@k and McNemar (pass_outcome), not given a lift table of its own.
    outcomes: tuple[str, ...] = Field(default_factory=lambda: tuple(o for o in outcomes() if o != FINAL_PASS))
    headline_outcome: str = OUTCOME
    level: float = 0.95
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    ks: tuple[int, ...] = (1, 3)
    stop_on_pass: bool | None = Field(default=None, description="attempts stop at the first pass (study.stop_on_pass); "
                                      "None: inferred from skipped attempts in the table")
    pass_outcome: str = Field(default=FINAL_PASS, description="what pass@k and McNemar count: the one pass, "
                              "decided at grading (a 0/1 column; stats apply no threshold of their own)")
    alpha: float = 0.05
    power: float = 0.8
    target_lift: float = 0.1

    @model_validator(mode="before")
    @classmethod
    def _removed_pass_threshold(cls, data: Any) -> Any:
        """A file written before stats counted the decided pass stored ``pass_threshold`` (always
        applied to ``final_pass``, 1/0, so no count depended on it): read it without the key."""
        if isinstance(data, dict) and "pass_threshold" in data:
            data = {k: v for k, v in data.items() if k != "pass_threshold"}
        return data


class Missingness(BaseModel):
    scored_by_condition: StatTable
    status: StatTable
    trajectories: StatTable
    one_sided: StatTable
    outcome_only_partial: StatTable
    sensitivity: StatTable
    bounds: StatTable | None = Field(default=None, description="two-sided imputation bounds per outcome")
    abstentions: StatTable | None = Field(default=None, description="undecided sub-checks per metric and arm")


class ClusteredMean(BaseModel):
    """A mean with a cluster-robust, small-sample corrected interval, and how it was computed.

    ``ci_lo``/``ci_hi`` are None when the interval is undefined (fewer than two clusters,
    or no variation); ``note`` then says why. ``method`` is the label a reader sees.
    """

    estimate: float | None
    se: float | None
    ci_lo: float | None
    ci_hi: float | None
    level: float
    df: float | None
    n: int
    n_clusters: int
    n_clusters_2: int | None = None
    cluster_by: str
    method: str
    iid_se: float | None = None
    design_effect: float | None = None
    clipped: bool = False
    no_variation: bool = False
    note: str | None = None


class Correlation(BaseModel):
    """Spearman correlation of two aligned series; None fields with a ``note`` when undefined."""

    x: str
    y: str
    n: int
    n_dropped: int = 0
    rho: float | None
    p_value: float | None
    ci_lo: float | None
    ci_hi: float | None
    level: float
    note: str | None = None


class KappaPair(BaseModel):
    judges: tuple[str, str]
    n: int
    kappa: float | None
    ci: tuple[float, float] | None = None
    note: str | None = None


class AgreementRow(BaseModel):
    metric: str
    judges: list[str]
    aggregate: str = Field(description="how the headline score of the metric is made from the judges' scores")
    n_items: int = Field(description="trials every judge scored")
    icc: float | None = Field(description="ICC(A,1) over the scores")
    icc_ci: tuple[float, float] | None = None
    band: str | None = None
    kappas: list[KappaPair] = Field(default_factory=list)
    note: str | None = None


AVERAGING = "mean over configurations of the mean score over tasks, per condition"


class ConfigHeadline(BaseModel):
    harness: str
    model: str
    n_tasks: int
    mean_without: float
    mean_with: float
    lift: float


class ExternalHeadline(BaseModel):
    """Headline pass rates in points (0-100), computed as ``averaging`` says."""

    source: str = "SkillsBench results registry"
    averaging: str = AVERAGING
    n_tasks: int
    n_configs: int
    balanced: bool
    mean_without: float
    mean_with: float
    lift: float
    min_config_lift: float
    max_config_lift: float
    configs: list[ConfigHeadline]


class StudyStats(VersionedRecord):
    """All statistics of one study. Lift is with-skill minus baseline on the outcome's scale."""

    SCHEMA_ARTIFACT: ClassVar[str] = "study statistics"
    SCHEMA_VERSION: ClassVar[str] = STATS_SCHEMA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = "regenerate with `aces-bench report`"

    settings: StatsSettings
    n_trials: int
    n_pair_keys: int
    lift_pooled: StatTable = Field(description="per outcome, over the scored pairs of positive cases")
    inference: StatTable | None = Field(default=None, description="pooled interval by clustering; headline marked")
    lift_by_group: dict[str, StatTable] = Field(default_factory=dict, description="per skill, harness, ...: positive cases")
    negative_controls: StatTable | None = Field(default=None, description="lift on negative-control cases, apart")
    false_activation: StatTable | None = Field(default=None, description="false-activation rate on negative controls")
    lift_by_cell: StatTable = Field(description="per (skill, harness, model, workspace_mode) and outcome")
    lift_by_case_kind: StatTable = Field(description="per (case_kind, negative_control) and outcome: negative controls apart")
    bootstrap: StatTable = Field(description="pooled lift with cluster bootstrap CI over skills and over cells")
    within_cell_sd: StatTable
    passk_pooled: StatTable
    passk_by_cell: StatTable
    routing_pooled: StatTable
    routing_by_cell: StatTable
    significance: StatTable = Field(description="per-skill sign/permutation tests on the headline outcome, Holm-corrected")
    design_power: StatTable
    missingness: Missingness
    static_correlation: Correlation | None = None
    static_by_skill: StatTable | None = None
    # Optional within version 1: a file written before calibration arms existed ran none.
    controls_run: list[str] = Field(default_factory=list, description="calibration arms with trials (study.controls)")
    controls: StatTable | None = Field(
        default=None, description="per arm and outcome, pooled over positive cases: null lift (null - baseline) with "
        "verdict flips, lift over placebo (with_skill - placebo), discovery gap (forced - with_skill); same "
        "inference as the headline (stats/arms.py); None when no arm ran")
    controls_by_skill: StatTable | None = Field(default=None, description="the same per skill")
