"""Attempts: stop-on-pass rounds as successive Harbor jobs, skipped attempts recorded, pass@k."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.emitters import emit_study
from aces_bench.grading.grade import StudyGrader
from aces_bench.judges.factory import build_judge
from aces_bench.records.trials import GRADES_FILE, read_grades
from aces_bench.run.attempts import attempt_job_config
from aces_bench.run.reuse import decide
from aces_bench.run.runner import job_config
from aces_bench.stats.passk import pass_counts, passk_table
from aces_bench.study.rounds import Rounds, StopOnPassSchedule

SKILLS = "skill.paths=[tests/fixtures/skills]"


def test_round_job_config_runs_one_attempt_of_the_remaining_tasks(tmp_path):
    spec = compose_spec(["skill=custom", SKILLS, "study.n_attempts=3", "study.stop_on_pass=true"], output_dir=tmp_path)
    emitted = emit_study(spec, tmp_path / "tasks")
    base = job_config(spec, emitted, tmp_path / "jobs")
    ids = [t.task_id for t in emitted.tasks][:2]
    round2 = attempt_job_config(base, 2, ids)
    assert round2.n_attempts == 1 and base.n_attempts == 3
    assert round2.job_name == f"{base.job_name}-attempt2"
    assert round2.datasets[0].task_names == sorted(ids)
    assert round2.datasets[0].path == emitted.tasks_dir


@pytest.mark.sandbox
def test_stop_on_pass_skips_later_attempts_and_records_them(tmp_path):
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed")
    spec = compose_spec(
        ["skill=custom", SKILLS, "skill.cases=[explicit-1]", "study.n_attempts=2", "study.stop_on_pass=true",
         "grading.pass_threshold=1.0"],
        output_dir=tmp_path,
    )
    emitted = emit_study(spec, tmp_path / "tasks")
    # The study's one round loop with the stop-on-pass schedule; pass is the graded final_pass
    # (decided once, aces_bench/core/modes.py).
    base = job_config(spec, emitted, tmp_path / "jobs")
    rounds = Rounds(spec, emitted, tmp_path, base, StudyGrader.of(spec, build_judge(spec.judge)), keys=None)

    def run_once():
        reuse = decide(spec, emitted, tmp_path, base.job_name, keys=None)
        return rounds.run(StopOnPassSchedule(rounds), reuse)

    _, stopped = run_once()
    assert stopped is None
    graded = read_grades(tmp_path / GRADES_FILE)  # the loop records every planned trial
    job_dirs = sorted((tmp_path / "jobs").glob("*-attempt*"))
    assert len(job_dirs) == 2
    by = {(g.condition, g.attempt): g for g in graded}
    assert len(graded) == 4
    # The with-skill arm passes at once: its second attempt is skipped, with the reason.
    assert by[("with_skill", 1)].status == "ok" and by[("with_skill", 1)].reward == 1.0
    assert by[("with_skill", 2)].status == "skipped"
    assert "attempt 1 passed" in by[("with_skill", 2)].failure_cause
    # The baseline (no skill) does not pass, so it gets its second attempt.
    assert by[("baseline", 1)].reward is not None and by[("baseline", 1)].reward < 1.0
    assert by[("baseline", 2)].status == "ok"
    # Round 2 ran only the task that had not passed.
    assert sum(1 for p in job_dirs[1].iterdir() if (p / "result.json").is_file()) == 1
    # Skipped attempts reach the trials table as rows with unscored metrics.
    rows = {(g.condition, g.attempt): g.to_row() for g in graded}
    skipped = rows[("with_skill", 2)]
    assert skipped.status == "skipped" and skipped.metric_security is None and skipped.composite is None
    # pass@2 of that table is defined: the with-skill arm's pass at attempt 1 counts for k = 2.
    table = pd.DataFrame([r.model_dump() for r in rows.values()])
    p2 = passk_table(pass_counts(table), ks=(2,), by=()).iloc[0]
    assert (p2["n_cases"], p2["n_short"], p2["pass_with"]) == (1, 0, 1.0)
    # Re-running resumes every round instead of redoing it: no trial runs again.
    trials = sorted(p for d in job_dirs for p in d.iterdir() if (p / "result.json").is_file())
    run_once()
    assert sorted(p for d in job_dirs for p in d.iterdir() if (p / "result.json").is_file()) == trials
    again = read_grades(tmp_path / GRADES_FILE)
    assert [(g.task_id, g.attempt, g.status) for g in again] == [(g.task_id, g.attempt, g.status) for g in graded]
