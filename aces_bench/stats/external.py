"""External paired data: SkillsBench's public results registry in the trials-table shape.

The registry (``website-data/results-registry.json`` of benchflow-ai/skillsbench-trajectories)
holds one aggregate per (task, model-harness configuration, condition): ``score`` = mean
trial reward x 100 over ``trials`` attempts, ``passCount`` and ``perfectCount``. Per-attempt
rewards are not published, so each registry row becomes ONE table row with
``attempt = 0``, ``reward = score / 100`` (the mean over attempts) and the attempt
counts kept in ``n_trials`` / ``n_pass`` / ``n_perfect``; pass@k uses those counts.
The row's pass is decided here, once, as the registry defines a solved task: ``final_pass``
is a ``score`` of 100 (every attempt perfect: ``perfectCount == trials``), what McNemar counts.
A SkillsBench task plays the part of both skill and case (its curated skills are
specific to it); the configuration is (harness, model).

Headline averaging (checked against the paper's v1.1 abstract and the registry): the
published pass rates are the mean over configurations of each configuration's mean
score over tasks, per condition; configuration-level gains are each configuration's
mean with-skill score minus its mean no-skill score. The grid is balanced (every
configuration has every task in both conditions), so this also equals the plain mean
over rows; ``skillsbench_headline`` computes it as the nested mean and reports
whether the grid is balanced.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aces_bench.core.errors import ReportError, from_validation
from aces_bench.records.stats import ConfigHeadline, ExternalHeadline
from aces_bench.records.trials import table_columns

CONDITION_MAP = {"No Skills": "baseline", "With Skills": "with_skill"}
REGISTRY_RUN_ID = "skillsbench-registry"
EXTRA_COLUMNS = ("config", "family", "score", "n_trials", "n_pass", "n_perfect")
PERFECT_SCORE = 100.0
"""The registry's mean score of a row whose every attempt was perfect: that row's pass."""


class RegistryRow(BaseModel):
    """One row of SkillsBench's results-registry.json (extra keys are tolerated)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    task: str
    model: str
    model_short: str = Field(alias="modelShort")
    harness: str
    family: str | None = None
    condition: str
    score: float = Field(ge=0, le=100)
    trials: int = Field(ge=1)
    pass_count: int = Field(alias="passCount", ge=0)
    perfect_count: int | None = Field(default=None, alias="perfectCount", ge=0)


def _read_rows(path: Path) -> list[RegistryRow]:
    if not path.is_file():
        raise ReportError("SkillsBench registry not found", where=path,
                          fix="pass the path of results-registry.json (website-data/ in benchflow-ai/skillsbench-trajectories)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReportError(f"not valid JSON: {exc}", where=path, fix="use the registry file unmodified") from None
    if not isinstance(raw, list):
        raise ReportError(f"expected a JSON array of rows, got {type(raw).__name__}", where=path,
                          fix="use results-registry.json, a list of {task, model, harness, condition, score, ...}")
    rows = []
    for i, item in enumerate(raw):
        try:
            row = RegistryRow.model_validate(item)
        except ValidationError as err:
            raise from_validation(err, cls=ReportError, where=path, prefix=f"[{i}]",
                                  fix="fix or drop that row; fields: task, model, modelShort, harness, condition, score, trials, passCount") from None
        if row.condition not in CONDITION_MAP:
            raise ReportError(f"row [{i}] (task {row.task!r}, {row.model!r}): unknown condition {row.condition!r}", where=path,
                              fix=f"condition must be one of: {', '.join(CONDITION_MAP)}")
        if row.pass_count > row.trials:
            raise ReportError(f"row [{i}] (task {row.task!r}, {row.model!r}): passCount {row.pass_count} > trials {row.trials}",
                              where=path, fix="passCount counts passing trials, so it cannot exceed trials")
        rows.append(row)
    return rows


def load_skillsbench_registry(path: str | Path) -> pd.DataFrame:
    """Read the registry into the trials-table shape (``records.table_columns()`` + ``EXTRA_COLUMNS``).

    One row per (task, configuration, condition); ``reward`` is the mean over attempts
    (score / 100) and ``final_pass`` whether that mean is perfect (``PERFECT_SCORE``);
    metric and composite columns are NaN (the registry publishes only rewards);
    ``has_trajectory`` is False. Duplicate (task, configuration, condition)
    rows are a user error naming the row.
    """
    path = Path(path)
    rows = _read_rows(path)
    records = []
    for r in rows:
        records.append({
            "run_id": REGISTRY_RUN_ID, "skill": r.task, "case_id": r.task, "case_kind": None,
            "negative_control": False, "harness": r.harness, "model": r.model_short,
            "workspace_mode": "isolation", "decoy_set": "none", "n_visible_skills": pd.NA,
            "condition": CONDITION_MAP[r.condition], "attempt": 0, "task_id": r.task, "trial_name": None,
            "status": "ok", "failure_cause": None, "reward": r.score / 100.0,
            "final_pass": r.score >= PERFECT_SCORE, "has_trajectory": False,
            "agent_label": r.model, "judge_label": None, "backend": "external:skillsbench",
            "config": r.model, "family": r.family, "score": r.score,
            "n_trials": r.trials, "n_pass": r.pass_count, "n_perfect": r.perfect_count,
        })
    frame = pd.DataFrame.from_records(records)
    for col in table_columns():
        if col not in frame.columns:
            frame[col] = np.nan
    frame["n_visible_skills"] = frame["n_visible_skills"].astype("Int64")
    frame = frame[[*table_columns(), *EXTRA_COLUMNS]]
    key = ["skill", "harness", "model", "condition"]
    dup = frame.duplicated(key, keep=False)
    if dup.any():
        first = frame.loc[dup, key].iloc[0].to_dict()
        raise ReportError(f"{int(dup.sum())} rows repeat a (task, configuration, condition): first {first}", where=path,
                          fix="keep one row per task, configuration and condition")
    return frame


def registry_pass_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Pass counts in ``passk.pass_counts`` shape (n = trials, c = passCount) for ``passk_table``."""
    from aces_bench.stats.passk import CASE_KEY

    counts = frame[[*CASE_KEY, "condition"]].copy()
    counts["n"] = frame["n_trials"].astype(int)
    counts["c"] = frame["n_pass"].astype(int)
    counts["n_unscored"] = 0
    return counts


def skillsbench_headline(frame: pd.DataFrame) -> ExternalHeadline:
    """Reproduce the published headline from a frame of ``load_skillsbench_registry``.

    Per configuration (harness, model): mean reward x 100 over its tasks, per condition;
    headline = mean of those over configurations. Configurations lacking a condition
    are a user error (their gain would be undefined).
    """
    if frame.empty:
        raise ReportError("registry frame is empty", where="skillsbench", fix="load a non-empty results-registry.json")
    points = frame.assign(points=frame["reward"].astype(float) * 100.0)
    per_config = points.groupby(["harness", "model", "condition"], sort=True)["points"].agg(["mean", "size"]).unstack("condition")
    lacking = per_config.index[per_config[("mean", "with_skill")].isna() | per_config[("mean", "baseline")].isna()] \
        if {("mean", "with_skill"), ("mean", "baseline")} <= set(per_config.columns) else per_config.index
    if len(lacking):
        raise ReportError(f"configuration {lacking[0]} lacks one condition", where="skillsbench",
                          fix="every (harness, model) needs both 'No Skills' and 'With Skills' rows")
    configs = [
        ConfigHeadline(harness=h, model=m, n_tasks=int(row[("size", "with_skill")]),
                       mean_without=float(row[("mean", "baseline")]), mean_with=float(row[("mean", "with_skill")]),
                       lift=float(row[("mean", "with_skill")] - row[("mean", "baseline")]))
        for (h, m), row in per_config.iterrows()
    ]
    tasks_per_cell = points.groupby(["harness", "model", "condition"])["skill"].nunique()
    n_tasks = int(points["skill"].nunique())
    without = float(np.mean([c.mean_without for c in configs]))
    with_ = float(np.mean([c.mean_with for c in configs]))
    return ExternalHeadline(
        n_tasks=n_tasks, n_configs=len(configs), balanced=bool((tasks_per_cell == n_tasks).all()),
        mean_without=without, mean_with=with_, lift=with_ - without,
        min_config_lift=min(c.lift for c in configs), max_config_lift=max(c.lift for c in configs), configs=configs,
    )
