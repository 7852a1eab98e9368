"""The trial records: one graded trial, the table row derived from it, and their files.

One trial is described once, by ``TrialFacts`` (what ran and how it ended). Two
records carry those facts (and ``aces_bench.grading.subject.TrialSubject``, what a
grader may read, carries them into grading):

- ``GradedTrial``: the facts plus every metric result (``results.MetricResult``), the
  verdict and the labels of who produced it (``LABEL_FIELDS``); one line of
  ``grades.jsonl`` (``write_grades`` / ``read_grades``). The report reads the same
  model (it imports no grader, judge or Harbor job machinery through this module).
- ``TrialRow``: the flat row of the tidy trials table, derived from a graded trial
  by ``GradedTrial.to_row``; its metric columns are ``metric_<name>`` for every
  metric in the registry (``aces_bench.core.metrics``), NaN when unscored, never 0
  (``write_graded`` / ``read_trials_table``, Parquet and CSV).

Pairing key (with_skill vs baseline, and the calibration arms null / placebo / forced of
``aces_bench/core/conditions.py``, each one more condition of the same key): ``PAIR_KEY``. A trial that failed, timed out or
could not be scored still has a row; its ``status`` and ``failure_cause`` say why and
its metric columns are empty.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, model_validator

from aces_bench.core.conditions import PAIRED, Condition
from aces_bench.core.errors import ReportError
from aces_bench.core.io import write_frame, write_text
from aces_bench.core.metrics import metric_column, metric_columns, metric_names
from aces_bench.core.modes import Status
from aces_bench.core.versioning import VersionedRecord, load_model
from aces_bench.records.results import MetricResult

GRADES_SCHEMA_VERSION = "2"
GRADES_REGENERATE = "re-grade the study (`aces-bench grade`)"
GRADES_FILE = "grades.jsonl"
TABLE_SCHEMA_VERSION = "2"
TABLE_PARQUET = "trials.parquet"
TABLE_CSV = "trials.csv"

CONDITIONS = PAIRED
"""The headline pair; the calibration arms (``conditions.CONTROLS``) share its pairing key."""
CELL_KEY = ("skill", "harness", "model", "workspace_mode")
PAIR_KEY = ("skill", "case_id", "attempt", "harness", "model", "workspace_mode", "decoy_set")
LABEL_FIELDS = ("run_id", "harness", "model", "agent_label", "judge_label", "backend")

WorkspaceMode = Literal["isolation", "group"]


class TrialFacts(BaseModel):
    """What identifies one trial and how it ended; shared by every record of it."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    attempt: int
    skill: str
    case_id: str
    case_kind: str | None
    negative_control: bool
    condition: Condition
    workspace_mode: WorkspaceMode
    decoy_set: str
    n_visible_skills: int
    status: Status
    failure_cause: str | None
    trial_name: str | None
    trial_dir: str | None
    reward: float | None
    visible_skills: str | None = Field(
        default=None, description="the skills the model was shown, comma-separated as the harness listed them "
        "(read from its request or trace, aces_bench/agents/traces.py); '' none at all; None unknown")
    target_listed: bool | None = Field(
        default=None, description="the target skill was among them (proof of load); None unknown")
    case_unreviewed: bool = Field(
        default=False, description="the case is a draft nobody has reviewed yet (status: draft, run with "
        "skill.accept_drafts=true): a verdict resting on it says so")


class TrialTotals(BaseModel):
    """The graded trial's scalar results that the trials table carries as they are."""

    model_config = ConfigDict(frozen=True)

    has_trajectory: bool = False
    composite: float | None = Field(default=None, description="diagnostic: process + outcome; includes metrics "
                                    "the baseline cannot earn")
    outcome: float | None = Field(default=None, description="task outcome, intention to treat (graders/outcome.py): "
                                  "verifier reward where the case has checks, else the judged outcome (the author "
                                  "graders' in custom_only); 0 for a failure of the arm; None when excluded")
    outcome_per_protocol: float | None = Field(default=None, description="secondary view: the outcome of a finished "
                                               "trial only (None for every unfinished one)")
    outcome_source: str | None = Field(default=None, description="verifier | judged | author | None (unscored)")
    trial_class: str | None = Field(default=None, description="finished | arm_failure | excluded "
                                    "(aces_bench/core/modes.py)")
    grading_mode: str | None = Field(default=None, description="the grading mode that decided outcome and pass")
    activated: bool | None = Field(default=None, description="skill_execution: the target skill was activated")
    script_ran: bool | None = Field(default=None, description="skill_execution: the expected script ran cleanly "
                                    "(None: the case names none)")
    baseline_saw_target: bool = Field(default=False, description="a baseline whose trace shows the target skill "
                                      "(graders/contamination.py) or whose model was shown it (proof of load): "
                                      "counted as it ran, flagged")
    expected_skill: str | None = Field(default=None, description="the skill the case is meant for (None: none, a "
                                       "negative control); the routing confusion matrix's row")
    fired_skill: str | None = Field(default=None, description="the first skill the trial activated, by staged name; "
                                    "'(none)' when it activated none; None when unknown (no trajectory)")
    first_attempt_pass: bool | None = None
    final_pass: bool | None = Field(default=None, description="the one pass (aces_bench/core/modes.py): outcome >= "
                                    "grading.pass_threshold, the author pass in custom_only; False for a failure of "
                                    "the arm, None when excluded")
    author_score: float | None = None
    n_steps: int | None = None
    n_tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    wall_sec: float | None = None
    usage_source: str | None = Field(default=None, description="where the tokens and cost come from: metered (the "
                                     "host-side metering proxy, from the provider's responses) | harness claim (the "
                                     "harness's own record, no metering point) | no model calls (reference agent)")
    claimed_input_tokens: int | None = Field(default=None, description="input tokens the harness's own record claims "
                                             "(kept as its claim when the trial was metered)")
    claimed_output_tokens: int | None = None
    usage_mismatch: bool | None = Field(default=None, description="metered trials: the claim disagrees with the "
                                        "metered tokens beyond the tolerance (the note says how); None not metered")


# --- the table row ---------------------------------------------------------------------


class TrialRow(TrialFacts, TrialTotals, VersionedRecord):
    """One row of the trials table. Metric scores are the extra fields ``metric_<name>``.

    Every registered metric has its column (None when unscored or not configured); a
    column of no registered metric, or any other unknown field, is refused.
    """

    model_config = ConfigDict(extra="allow", frozen=False)
    __pydantic_extra__: dict[str, float | None] = Field(init=False)  # type: ignore[assignment]
    SCHEMA_ARTIFACT: ClassVar[str] = "trials table"
    SCHEMA_VERSION: ClassVar[str] = TABLE_SCHEMA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = GRADES_REGENERATE

    SCHEMA_MIGRATIONS: ClassVar[dict[str, Any]] = {"1": lambda d: _itt_from_v1(d)}
    # Files always carry their version; a record built in code without one is current.
    SCHEMA_UNVERSIONED: ClassVar[str] = "2"

    run_id: str
    harness: str
    model: str
    agent_label: str
    judge_label: str | None = None
    backend: str
    failure_cause: str | None = None
    trial_name: str | None
    trial_dir: str | None = None
    reward: float | None = None

    @model_validator(mode="before")
    @classmethod
    def _metric_columns(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = set(cls.model_fields)
        columns = set(metric_columns())
        unknown = [k for k in data if k not in known and k not in columns]
        if unknown:
            # The same words as pydantic's extra="forbid", one key per line.
            raise ValueError("; ".join(f"{k}: Extra inputs are not permitted" for k in unknown))
        return {**{c: None for c in metric_columns()}, **data}

    def metric(self, name: str) -> float | None:
        return (self.model_extra or {}).get(metric_column(name))


_V1_ARM_FAILURES = ("timeout", "agent_error", "verifier_error")


def _itt_from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 grade or row in version 2's terms: version 1's ``outcome`` left unfinished
    trials out (it becomes ``outcome_per_protocol``) and its ``outcome_failed`` scored the
    agent's own failures 0 (the intention-to-treat ``outcome`` now); a failed trial's pass
    is False. Version 1 classed every sandbox failure as infrastructure: such trials stay
    excluded, as they were then."""
    data = dict(data)
    status = data.get("status")
    data["outcome_per_protocol"] = data.get("outcome")
    data["outcome"] = data.pop("outcome_failed", None)
    contaminated = bool(data.get("baseline_saw_target"))
    if status == "ok" and not contaminated:
        data.setdefault("trial_class", "finished")
    elif status in _V1_ARM_FAILURES and not contaminated:
        data.setdefault("trial_class", "arm_failure")
        data["final_pass"] = False
    else:
        data.setdefault("trial_class", "excluded")
        data["final_pass"] = None
    data["schema_version"] = "2"
    return data


def is_negative_control(frame: pd.DataFrame) -> pd.Series:
    """Rows whose case is a negative control (flag, or ``case_kind == "negative"``)."""
    flag = frame["negative_control"].astype("boolean").fillna(False).astype(bool) \
        if "negative_control" in frame.columns else pd.Series(False, index=frame.index)
    kind = (frame["case_kind"].astype(str) == "negative") if "case_kind" in frame.columns else False
    return flag | kind


def positive_cases(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs on cases the skill is meant for (negative controls left out)."""
    return pairs.loc[~is_negative_control(pairs)]


def table_columns() -> tuple[str, ...]:
    """The columns of the trials table in file order (metric columns after ``reward``)."""
    return (
        "schema_version", "run_id", "skill", "case_id", "case_kind", "negative_control", "harness", "model",
        "workspace_mode", "decoy_set", "n_visible_skills", "visible_skills", "target_listed", "case_unreviewed",
        "condition", "attempt",
        "task_id", "trial_name",
        "status", "failure_cause", "reward", *metric_columns(), *TrialTotals.model_fields,
        "agent_label", "judge_label", "backend", "trial_dir",
    )


_FLOAT_COLUMNS = ("reward", "composite", "outcome", "outcome_per_protocol", "cost_usd", "wall_sec", "author_score")
# Counts that may be missing (a failed trial has no steps): nullable integers, so a CSV
# says 12, never 12.0.
_COUNT_COLUMNS = ("n_steps", "n_tool_calls", "input_tokens", "output_tokens", "claimed_input_tokens",
                  "claimed_output_tokens")
CSV_FLOAT_FORMAT = "%.6g"
"""Six significant digits in ``trials.csv``: scores and seconds as a reader uses them
(the Parquet file keeps full precision)."""


# --- the study-level table -----------------------------------------------------------

STUDY_COLUMNS = ("member", "arm", "arms")
PRIMARY_ARM = "primary"
"""The arm a study's headline is computed on: a study that is not a design is this one arm."""


class StudyTrialRow(TrialRow):
    """One row of a study-level trials table (``aces_bench.load``; a design's root
    ``trials.parquet``): a member's ``TrialRow`` and where it sits in the study."""

    SCHEMA_ARTIFACT: ClassVar[str] = "study trials table"

    member: str = Field(description="the member folder the trial ran in (= run_id)")
    arm: str = Field(description="the design arm the trial counts in: the first arm listing its member")
    arms: str = Field(description="every design arm listing its member, ';'-separated, in design order")


def study_table_columns() -> tuple[str, ...]:
    return (*table_columns(), *STUDY_COLUMNS)


def rows_to_frame(rows: list[TrialRow], columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in rows], columns=list(columns or table_columns()))
    for col in frame.columns:
        if col.startswith("metric_") or col in _FLOAT_COLUMNS:
            frame[col] = frame[col].astype("float64")
        elif col in _COUNT_COLUMNS:
            frame[col] = frame[col].astype("Int64")
    return frame


def write_table_csv(path: Path, frame: pd.DataFrame) -> Path:
    """A trials table as CSV: floats to ``CSV_FLOAT_FORMAT``, counts as integers."""
    return write_frame(path, frame, float_format=CSV_FLOAT_FORMAT)


# --- the graded trial ------------------------------------------------------------------


class GradedTrial(TrialFacts, TrialTotals, VersionedRecord):
    """One trial as graded: one line of ``grades.jsonl``.

    Extra fields of a newer writer of the same version are ignored (pydantic's default).
    """

    model_config = ConfigDict(frozen=True)
    SCHEMA_ARTIFACT: ClassVar[str] = "grades"
    SCHEMA_VERSION: ClassVar[str] = GRADES_SCHEMA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = GRADES_REGENERATE
    SCHEMA_MIGRATIONS: ClassVar[dict[str, Any]] = {"1": lambda d: _itt_from_v1(d)}
    # Files always carry their version; a record built in code without one is current.
    SCHEMA_UNVERSIONED: ClassVar[str] = "2"

    trajectory_error: str | None = None
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    self_correction: MetricResult | None = Field(
        default=None, description="the self_correction result; its section via graders.self_correction.SelfCorrection.of")
    final_answer: str | None = None
    outcome_only: float | None = Field(default=None, description="mean of the outcome metrics scored")
    dimensions: dict[str, float | None] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list, description="how the trial was graded where it is not obvious")
    read_limits: list[str] = Field(
        default_factory=list,
        description="trial files the host skipped (a pipe, socket, device, link) or read only in part (past a read cap)")
    credential_names: list[str] = Field(
        default_factory=list, description="credentials passed to the trial (names only); their values are redacted")
    run_id: str | None = None
    harness: str | None = None
    model: str | None = None
    agent_label: str | None = None
    judge_label: str | None = None
    backend: str | None = None

    @property
    def key(self) -> tuple[str, int, str]:
        """How the report finds a trial's grade: (task_id, attempt, condition)."""
        return (self.task_id, self.attempt, self.condition)

    def score(self, name: str) -> float | None:
        m = self.metrics.get(name)
        return m.score if m else None

    def to_row(self) -> TrialRow:
        """The trials-table row, labelled with this record's own labels (``LABEL_FIELDS``,
        given by the stage that graded it: ``aces_bench.grading.labels.spec_labels``)."""
        labels = {k: getattr(self, k) for k in LABEL_FIELDS}
        missing = [k for k in LABEL_FIELDS if labels[k] is None and k != "judge_label"]
        if missing:
            raise ReportError(f"graded trial {self.task_id} has no {', '.join(missing)}",
                              where=GRADES_FILE, fix=GRADES_REGENERATE)
        shared = self.model_dump(include={*TrialFacts.model_fields, *TrialTotals.model_fields})
        return TrialRow(**shared, **labels, **{metric_column(n): self.score(n) for n in metric_names()})


# --- files -------------------------------------------------------------------------------


def write_grades(path: Path, graded: list[GradedTrial], *, mask: Callable[[Any], Any]) -> None:
    """One JSON line per trial, each record passed through ``mask`` first.

    ``mask`` takes a record's JSON value and returns it with secret-like strings masked
    (the grading layer's ``aces_bench.graders.redact.redact_value``, whose patterns records
    do not load). Values are masked before serialization, never the serialized text,
    where a mask could swallow an escape and break the line.
    """
    lines = [json.dumps(mask(g.model_dump(mode="json")), ensure_ascii=False) for g in graded]
    write_text(path, "\n".join(lines) + ("\n" if lines else ""))


def read_grades(path: Path) -> list[GradedTrial]:
    """Every line of a grades.jsonl as a (migrated) GradedTrial; a bad line is a ReportError naming it."""
    path = Path(path)
    fix = f"{GRADES_REGENERATE} or restore the file"
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportError(f"line {lineno} is not JSON: {exc.msg}", where=path, fix=fix) from None
        out.append(load_model(GradedTrial, raw, where=path, fix=fix, prefix=f"line {lineno}"))
    return out


def grades_by_key(path: Path) -> dict[tuple[str, int, str], GradedTrial]:
    """grades.jsonl by (task_id, attempt, condition), as the report looks them up."""
    return {g.key: g for g in read_grades(path)}


def write_graded(out_dir: Path, graded: list[GradedTrial], *, mask: Callable[[Any], Any]) -> pd.DataFrame:
    """The one writer of a study's graded trials (the study's round loop and ``aces-bench
    grade``): ``grades.jsonl`` (each record through ``mask``, as ``write_grades``) and the
    trials table, Parquet and CSV. Returns the table."""
    write_grades(out_dir / GRADES_FILE, graded, mask=mask)
    frame = rows_to_frame([g.to_row() for g in graded])
    write_frame(out_dir / TABLE_PARQUET, frame)
    write_table_csv(out_dir / TABLE_CSV, frame)
    return frame


def read_trials_table(results_dir: Path) -> pd.DataFrame:
    """Read a results dir's table; a dir of sweep members is read as their union."""
    results_dir = Path(results_dir)
    direct = results_dir / TABLE_PARQUET
    paths = [direct] if direct.is_file() else sorted(results_dir.glob(f"*/{TABLE_PARQUET}"))
    if not paths:
        raise ReportError(
            f"no {TABLE_PARQUET} here or in its subfolders",
            where=results_dir,
            fix="point at a study output dir (outputs/<study>) or a multirun dir (multirun/<study>)",
        )
    frames = [read_table_file(p) for p in paths]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    missing = [c for c in ("skill", "case_id", "condition", "status") if c not in frame.columns]
    if missing:
        raise ReportError(f"table lacks columns {missing}", where=paths[0], fix="re-run the study with this version")
    return frame


def _csv_text_columns() -> dict[str, type]:
    # CSV has no types: text columns are read as text so a run id like "2024" stays a string.
    return {name: str for name, f in StudyTrialRow.model_fields.items() if f.annotation in (str, str | None)}


def _cell(value: object) -> object:
    # Parquet and CSV store an unscored metric or an absent label as NaN; the model says None.
    return None if not isinstance(value, (list, tuple, dict)) and pd.isna(value) else value


def validate_rows(frame: pd.DataFrame, where: Path, model: type[TrialRow] = TrialRow) -> list[TrialRow]:
    """Every row of a stored table as a ``TrialRow`` (migrated); a bad row is a ReportError naming it."""
    fix = f"{GRADES_REGENERATE} or restore the file"
    return [
        load_model(model, {k: _cell(v) for k, v in record.items()}, where=where, fix=fix, prefix=f"row {i}")
        for i, record in enumerate(frame.to_dict("records"))
    ]


def read_table_file(path: Path) -> pd.DataFrame:
    """One stored trials table (Parquet or CSV, by suffix), checked row by row against ``TrialRow``.

    Rows of an older schema version come back migrated; a newer or unknown version,
    a missing column or a bad value raises a ReportError naming the file and row.
    """
    path = Path(path)
    try:
        # Only an empty CSV field is missing: a model recorded as "n/a" (a harness with no model) stays text.
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(
            path, dtype=_csv_text_columns(), keep_default_na=False, na_values=[""])
    except (OSError, ValueError) as exc:
        raise ReportError(f"cannot read the trials table: {exc}", where=path,
                          fix=f"{GRADES_REGENERATE} or restore the file") from None
    # A study-level table (a design's root trials.parquet) carries member and arm too.
    study = "member" in frame.columns
    rows = validate_rows(frame, path, StudyTrialRow if study else TrialRow)
    columns = study_table_columns() if study else table_columns()
    versions = set(frame["schema_version"].astype(str)) if "schema_version" in frame.columns else set()
    if frame.empty or (versions == {TABLE_SCHEMA_VERSION} and list(frame.columns) == list(columns)):
        return frame
    return rows_to_frame(rows, columns)  # migrated, or a metric column added since: rebuilt in the current shape
