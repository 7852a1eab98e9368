"""A reused baseline trial belongs to the study that reused it: ``aces-bench grade`` reads
its arm from that study's own task dir, so deleting the study that first ran it changes
nothing, and a trial whose arm nothing names is refused, never relabelled."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from harbor.models.trial.result import TrialResult

from aces_bench.cli import main as aces_main
from aces_bench.config.compose import compose_spec
from aces_bench.records.trials import read_grades
from aces_bench.run.reuse import STORE_ENV, current_plan
from aces_bench.study.entry import run_study

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is absent: the local backend needs it"),
]

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"


def _study(tmp_path: Path, skill: Path, name: str) -> Path:
    out = tmp_path / name
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "report=false",
                         f"+backend.kwargs.root_parent={tmp_path}"], output_dir=out)
    return run_study(spec)


def _grade(args: list[str], capsys) -> tuple[int, str, str]:
    rc = aces_main(["grade", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def reusing_study(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A first study stores its baselines; the skill changes; a second study reuses them;
    then the first study's folder is deleted (an old study cleaned up, a CI clone gone)."""
    tmp = tmp_path_factory.mktemp("reusegrade")
    skill = tmp / "skills" / "csv-column-sum"
    shutil.copytree(SKILL, skill)
    first = _study(tmp, skill, "first")
    md = skill / "SKILL.md"
    md.write_text(md.read_text() + "\nOne more line of advice.\n")
    second = _study(tmp, skill, "second")
    assert len(current_plan(second).reused) == 2
    shutil.rmtree(first)
    return tmp, Path(os.environ[STORE_ENV]), second


def test_reused_trials_point_at_their_own_studys_tasks(reusing_study):
    _, store, second = reusing_study
    reused = sorted((second / "jobs" / "reused").iterdir())
    assert len(reused) == 2
    for trial in reused:
        result = TrialResult.model_validate_json((trial / "result.json").read_text())
        task = Path(str(result.config.task.path))
        assert task.parent == (second / "tasks").resolve() and (task / "task.toml").is_file(), task
        config = json.loads((trial / "config.json").read_text())
        assert Path(config["task"]["path"]) == task
        provenance = json.loads((trial / "reused.json").read_text())
        assert provenance["source"].endswith("/first") and "/first/" in provenance["source_task_path"]
    # The copies are hard links into the store: re-pointing them replaced the files, never
    # wrote through, so the store still holds the trials as they ran.
    stored = sorted(store.rglob("trial/result.json"))
    assert len(stored) == 2
    for path in stored:
        assert "/first/tasks/" in str(TrialResult.model_validate_json(path.read_text()).config.task.path)


def test_grade_after_the_source_study_is_deleted_keeps_every_arm(reusing_study, tmp_path, capsys):
    tmp, _, second = reusing_study
    skill = tmp / "skills" / "csv-column-sum"
    rc, out, err = _grade([str(second / "jobs"), "--cases", str(skill), "--out", str(tmp_path / "o")], capsys)
    assert rc == 0, err
    pipeline = {g.trial_dir: g for g in read_grades(second / "grades.jsonl")}
    regraded = {g.trial_dir: g for g in read_grades(tmp_path / "o" / "grades.jsonl")}
    assert set(pipeline) == set(regraded) and len(pipeline) == 4
    table = pd.read_parquet(second / "trials.parquet")
    reused = table.loc[table["trial_dir"].str.contains("/jobs/reused/"), "trial_dir"]
    assert len(reused) == 2
    for trial_dir in reused:
        assert regraded[trial_dir].condition == "baseline", regraded[trial_dir].notes
        assert "condition baseline: from the task's aces metadata" in regraded[trial_dir].notes
    for key, g in pipeline.items():
        r = regraded[key]
        assert (r.condition, r.case_id) == (g.condition, g.case_id), key
        assert {m: v.score for m, v in r.metrics.items()} == {m: v.score for m, v in g.metrics.items()}, key
        assert (r.composite, r.final_pass) == (g.composite, g.final_pass), key


def test_a_trial_whose_task_metadata_is_gone_is_refused_not_relabelled(reusing_study, tmp_path, capsys):
    """The study's own tasks/ deleted too (its jobs/ copied elsewhere): nothing names the
    arm, so grade stops with one message naming the trial and the fix."""
    tmp, _, second = reusing_study
    skill = tmp / "skills" / "csv-column-sum"
    jobs = tmp_path / "jobs"
    shutil.copytree(second / "jobs", jobs)
    moved_study = tmp_path / "moved-study"
    shutil.copytree(second / "jobs", moved_study / "jobs")
    moved = tmp_path / "tasks-elsewhere"
    shutil.move(second / "tasks", moved)
    try:
        rc, out, err = _grade([str(jobs), "--cases", str(skill), "--out", str(tmp_path / "o")], capsys)
        # A folder named like an arm does not relabel an aces-bench trial (a study called
        # "noskills" holds with-skill trials too): only its task metadata names its arm.
        marked = tmp_path / "noskills"
        shutil.copytree(jobs, marked)
        rc2, _, err2 = _grade([str(marked), "--out", str(tmp_path / "m")], capsys)
        assert rc2 == 2 and "4 trial(s) name no arm" in err2 and "only its [metadata.aces]" in err2
        # A study moved or copied whole (its result.json files name the old place, now gone)
        # still grades: each trial's task is found in its own study's tasks/.
        shutil.copytree(moved, moved_study / "tasks")
        rc3, _, err3 = _grade([str(moved_study / "jobs"), "--cases", str(skill), "--out", str(tmp_path / "s")], capsys)
        assert rc3 == 0, err3
        pipeline = {Path(g.trial_dir).relative_to(second): g for g in read_grades(second / "grades.jsonl")}
        regraded = {Path(g.trial_dir).relative_to(moved_study): g for g in read_grades(tmp_path / "s" / "grades.jsonl")}
        assert set(regraded) == set(pipeline) and len(regraded) == 4
        for key, g in pipeline.items():
            assert regraded[key].condition == g.condition and regraded[key].composite == g.composite, key
            assert any(n.startswith(f"task dir {moved_study / 'tasks'}") for n in regraded[key].notes)
    finally:
        shutil.move(moved, second / "tasks")
    assert rc == 2
    assert err.startswith("error: ") and "Traceback" not in err
    assert "4 trial(s) name no arm" in err and "task dir" in err and "is gone" in err
    assert str(jobs) in err
    assert "fix:" in err and "--condition" in err
    assert not (tmp_path / "o" / "grades.jsonl").exists()
    # Told the arm, it grades (every trial as that arm, the user's word, noted as such).
    rc, _, err = _grade([str(jobs / "reused"), "--condition", "baseline", "--out", str(tmp_path / "b")], capsys)
    assert rc == 0, err
    graded = read_grades(tmp_path / "b" / "grades.jsonl")
    assert len(graded) == 2 and {g.condition for g in graded} == {"baseline"}
