"""Read a study's stored results: the trials table, grades, provenance, trajectories.

Reads only; never reruns a trial. A results dir is one study output dir or a multirun
dir whose subfolders are study output dirs ("members"). Every trial row is matched to
its member through ``run_id`` so its grade and trajectory are found even when two
members share task ids (the same task run by two harnesses).

Grades are ``aces_bench.records.trials.GradedTrial``, the model the grader writes; reading
them imports no grader, judge or job machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd
from harbor.models.trial.paths import TrialPaths

from aces_bench.config.spec import RunSpec, WorkspaceSpec
from aces_bench.core.errors import ReportError
from aces_bench.core.versioning import load_model
from aces_bench.records.provenance import Provenance
from aces_bench.records.study import KINDS
from aces_bench.records.study_data import member_dirs as study_member_dirs
from aces_bench.records.study_data import study_trials
from aces_bench.records.trials import GRADES_FILE, TABLE_PARQUET, GradedTrial, grades_by_key

PROVENANCE_FILE = KINDS["provenance"].file


class StudyProvenance(Provenance):
    """A member's ``provenance.json`` as the report reads it: the record, with its spec
    validated as the ``RunSpec`` it was dumped from (the record keeps the dump: records
    sit below config), so an old spec is migrated and a bad one refused as before."""

    spec: RunSpec


def workspace_dirs(provenance: StudyProvenance | None) -> tuple[str, str]:
    """Where the study's trials worked and found their skills (``workspace.workdir``,
    ``workspace.skills_dir``): its spec's, else (no provenance) the settings' declared
    defaults, so a trajectory is read as the trial saw it."""
    if provenance is not None:
        return provenance.spec.workspace.workdir, provenance.spec.workspace.skills_dir
    declared = WorkspaceSpec.model_fields
    return declared["workdir"].default, declared["skills_dir"].default


@dataclass
class Member:
    """One study output dir inside the results dir."""

    path: Path
    run_ids: tuple[str, ...]
    provenance: StudyProvenance | None
    provenance_note: str | None
    grades: dict[tuple[str, int, str], GradedTrial] = field(default_factory=dict)
    grades_note: str | None = None

    @cached_property
    def instructions(self) -> dict[str, str]:
        """instruction.md of each emitted task, by task id (absent tasks are left out)."""
        out = {}
        tasks = self.path / "tasks"
        if tasks.is_dir():
            for p in sorted(tasks.glob("*/instruction.md")):
                out[p.parent.name] = p.read_text(encoding="utf-8", errors="replace")
        return out

    def grade(self, task_id: str, attempt: int, condition: str) -> GradedTrial | None:
        return self.grades.get((task_id, int(attempt), condition))

    @property
    def workspace_dirs(self) -> tuple[str, str]:
        """(workdir, skills dir) of this member's trials (``workspace_dirs``)."""
        return workspace_dirs(self.provenance)

    def trajectory_path(self, grade: GradedTrial | None, trial_name: str | None) -> Path | None:
        """Where this trial's ATIF file is: the recorded trial dir, else under this member's jobs/."""
        if grade is not None and grade.trial_dir:
            p = TrialPaths(Path(grade.trial_dir)).agent_dir / "trajectory.json"
            if p.is_file():
                return p
        name = trial_name or (grade.trial_name if grade else None)
        if name:
            found = sorted(self.path.glob(f"jobs/*/{name}/agent/trajectory.json"))
            if found:
                return found[0]
        return None


def read_provenance(path: Path) -> tuple[StudyProvenance | None, str | None]:
    """The member's provenance, or (None, why) when absent; an invalid file is a user error."""
    if not path.is_file():
        return None, f"{path.name} is missing: the report cannot say which config and code produced these results"
    return load_model(StudyProvenance, path.read_bytes(), where=path,
                      fix="restore provenance.json from the run, or re-run the study"), None


def member_dirs(results_dir: Path) -> list[Path]:
    """The study output dirs the trials table was read from (``aces_bench.records.study_data``)."""
    return [m.path for m in study_member_dirs(results_dir)]


@dataclass
class StudyData:
    """Everything stored about a study, read once."""

    results_dir: Path
    trials: pd.DataFrame
    members: list[Member]

    @cached_property
    def member_of_run(self) -> dict[str, Member]:
        return {rid: m for m in self.members for rid in m.run_ids}

    def member_for(self, run_id: str) -> Member | None:
        return self.member_of_run.get(str(run_id))

    def grade_for(self, row: pd.Series | dict) -> GradedTrial | None:
        member = self.member_for(row["run_id"])
        return member.grade(row["task_id"], row["attempt"], row["condition"]) if member else None


def load_study(results_dir: Path) -> StudyData:
    """Read the trials table and every member's grades and provenance (no trajectories yet)."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError("results dir does not exist", where=results_dir,
                          fix="point at a study output dir (outputs/<study>) or a multirun dir")
    # One table with member and arm (aces_bench.load), read from the members' own tables.
    trials = study_trials(results_dir)
    members = []
    for path in member_dirs(results_dir):
        run_ids = tuple(sorted(pd.read_parquet(path / TABLE_PARQUET, columns=["run_id"])["run_id"].astype(str).unique()))
        provenance, note = read_provenance(path / PROVENANCE_FILE)
        grades_path = path / GRADES_FILE
        grades, grades_note = ({}, f"{GRADES_FILE} is missing: per-metric evidence cannot be shown")
        if grades_path.is_file():
            grades, grades_note = grades_by_key(grades_path), None
        members.append(Member(path=path, run_ids=run_ids, provenance=provenance, provenance_note=note,
                              grades=grades, grades_note=grades_note))
    return StudyData(results_dir=results_dir, trials=trials, members=members)
