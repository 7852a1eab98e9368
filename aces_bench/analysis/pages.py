"""Assemble what each HTML page shows from the stored study (views, not statistics)."""

from __future__ import annotations

import math
import os
from functools import lru_cache
from pathlib import Path

import pandas as pd
from harbor.models.trajectories import Trajectory
from harbor.models.trial.paths import TrialPaths

from aces_bench.analysis.trajectory_view import clip, view
from aces_bench.analysis.triage import (
    TriageGroup,
    activation,
    triage,
)
from aces_bench.core.masking import credential_values
from aces_bench.inputs.trialfiles import is_regular
from aces_bench.records.trials import PAIR_KEY, GradedTrial
from aces_bench.reports.html import (
    PairView,
    TrialView,
    metric_views,
    pair_anchor,
    self_correction_view,
    skill_href,
)
from aces_bench.reports.records import StudyData, workspace_dirs


def _clean(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA else v


def _flag(v) -> bool | None:
    v = _clean(v)
    return None if v is None else bool(v)


class StudyPages:
    """Per-trial lookups over a loaded study, with trajectories parsed once each."""

    def __init__(self, study: StudyData, *, page_dir: Path | None = None):
        self.study = study
        self.page_dir = page_dir  # where the skill pages land: links to trial files are relative to it
        self.rows: dict[tuple, dict] = {}
        for rec in study.trials.to_dict("records"):
            rec = {k: _clean(v) for k, v in rec.items()}
            self.rows[(*(rec[k] for k in PAIR_KEY), rec["condition"])] = rec
        self._trajectory = lru_cache(maxsize=None)(self._load_trajectory)
        self._paths: dict[tuple, Path] = {}

    def row(self, key: dict, condition: str) -> dict | None:
        return self.rows.get((*(key[k] for k in PAIR_KEY), condition))

    def grade(self, row: dict | None) -> GradedTrial | None:
        return self.study.grade_for(row) if row is not None else None

    def _load_trajectory(self, run_id: str, task_id: str, attempt: int, condition: str) -> tuple[Trajectory | None, str | None]:
        member = self.study.member_for(run_id)
        if member is None:
            return None, f"no study dir holds run {run_id!r}"
        grade = member.grade(task_id, attempt, condition)
        row = self.rows_by_trial.get((run_id, task_id, attempt, condition), {})
        path = member.trajectory_path(grade, row.get("trial_name"))
        trial_dir = Path(grade.trial_dir) if grade is not None and grade.trial_dir else None
        if path is None and trial_dir is None:
            recorded = grade.trajectory_error if grade is not None else None
            return None, recorded or "no trajectory file was recorded for this trial"
        self._paths[(run_id, task_id, attempt, condition)] = path or (TrialPaths(trial_dir).agent_dir / "trajectory.json")
        traj, err = load_trajectory(path, trial_dir)
        if traj is None and grade is not None and grade.trajectory_error:
            return None, grade.trajectory_error
        return traj, err

    def workspace_dirs(self, row: dict) -> tuple[str, str]:
        """The trial's (workdir, skills dir): its member's workspace (``reports.records.workspace_dirs``)."""
        member = self.study.member_for(row["run_id"])
        return member.workspace_dirs if member is not None else workspace_dirs(None)

    def trajectory_file(self, row: dict) -> str | None:
        """A link to the trial's trajectory file (the page shows only a bounded excerpt of it)."""
        path = self._paths.get((str(row["run_id"]), str(row["task_id"]), int(row["attempt"]), str(row["condition"])))
        if path is None or not is_regular(path):
            return None
        if self.page_dir is None:
            return Path(path).absolute().as_uri()
        return Path(os.path.relpath(Path(path).absolute(), Path(self.page_dir).absolute())).as_posix()

    @property
    def rows_by_trial(self) -> dict[tuple, dict]:
        if not hasattr(self, "_by_trial"):
            self._by_trial = {(r["run_id"], r["task_id"], int(r["attempt"]), r["condition"]): r for r in self.rows.values()}
        return self._by_trial

    def trajectory(self, row: dict) -> tuple[Trajectory | None, str | None]:
        return self._trajectory(str(row["run_id"]), str(row["task_id"]), int(row["attempt"]), str(row["condition"]))

    def trial_view(self, row: dict | None) -> TrialView | None:
        if row is None:
            return None
        grade = self.grade(row)
        traj, note = self.trajectory(row)
        names = list(grade.credential_names) if grade is not None else []
        creds = credential_values(names)
        unknown = [n for n in names if n not in creds]
        if traj is not None and unknown:
            # The values cannot be masked without knowing them: show nothing of the trajectory.
            traj, note = None, (f"trajectory not shown: the trial was passed {', '.join(unknown)}, whose value is not "
                                "set in this environment to be masked; export it and rebuild the report")
        answer = grade.final_answer if grade is not None else None
        correction, correction_check = self_correction_view(grade.self_correction if grade else None)
        return TrialView(
            status=str(row["status"]), failure_cause=row.get("failure_cause"),
            metrics=metric_views(grade.metrics if grade else {}, row),
            composite=row.get("composite"), reward=row.get("reward"),
            self_correction=correction, self_correction_check=correction_check,
            final_pass=_flag(row.get("final_pass")), first_attempt_pass=_flag(row.get("first_attempt_pass")),
            final_answer=clip(answer, credentials=creds) if answer else None,
            trajectory=view(traj, creds) if traj is not None else None,
            trajectory_note=note or "",
            trajectory_href=self.trajectory_file(row),
            read_limits=list(grade.read_limits) if grade is not None else [],
        )

    def instruction(self, row: dict | None) -> str | None:
        if row is None:
            return None
        member = self.study.member_for(row["run_id"])
        return member.instructions.get(str(row["task_id"])) if member else None

    def skill_pairs(self, pairs: pd.DataFrame, skill: str, outcome: str) -> list[PairView]:
        out = []
        for rec in pairs.loc[pairs["skill"] == skill].to_dict("records"):
            key = {k: rec[k] for k in PAIR_KEY}
            w, b = self.row(key, "with_skill"), self.row(key, "baseline")
            either = w or b
            text = self.instruction(w) or self.instruction(b)
            lift = _clean(rec.get(f"lift_{outcome}"))
            out.append(PairView(
                anchor=pair_anchor(key), case_id=str(key["case_id"]), case_kind=either.get("case_kind") if either else None,
                attempt=int(key["attempt"]), harness=str(key["harness"]), model=str(key["model"]),
                workspace_mode=str(key["workspace_mode"]), decoy_set=str(key["decoy_set"]), lift=lift,
                instruction=clip(text) if text else None, with_skill=self.trial_view(w), baseline=self.trial_view(b),
            ))
        return out

    def activation(self, rec: dict) -> bool | None:
        """Did the with-skill trial of this pair activate its target? Grader first, trajectory second."""
        row = self.row(rec, "with_skill")
        if row is None:
            return None
        traj, _ = self.trajectory(row)  # parsed once per trial (cached); the pair's page shows it anyway
        return activation(self.grade(row), traj, str(rec["skill"]), self.workspace_dirs(row))

    def negative_control(self, rec: dict) -> bool:
        row = self.row(rec, "with_skill") or self.row(rec, "baseline") or {}
        return bool(row.get("negative_control")) or row.get("case_kind") == "negative"

    def triage(self, pairs: pd.DataFrame, outcome: str) -> list[TriageGroup]:
        groups = triage(pairs, outcome=outcome, activation=self.activation, negative_control=self.negative_control)
        for g in groups:
            for c in g.cases:
                c.href = f"{skill_href(str(c.key['skill']))}#{pair_anchor(c.key)}"
        return groups


def load_trajectory(path: Path | None, trial_dir: Path | None = None) -> tuple[Trajectory | None, str | None]:
    """The trajectory as the graders read it (``graders/atif.py``: continuations merged,
    file subagents embedded, a plain-text log synthesised when there is no ATIF file), so
    the steps a page shows are the steps that were graded; (None, reason) when absent."""
    from aces_bench.graders.atif import load_trial_trajectory, resolve_trajectory

    if path is not None:
        loaded = resolve_trajectory(path)
    elif trial_dir is not None and Path(trial_dir).is_dir():
        loaded = load_trial_trajectory(Path(trial_dir))
    else:
        return None, "no trajectory file was recorded for this trial"
    return loaded.trajectory, loaded.error
