"""Collecting a job whose trials were interrupted: every unfinished trial dir is
reported once, for the task it was started for, never dropped or counted twice."""

from __future__ import annotations

import json
from pathlib import Path

from support.studies import needs_bwrap, study_overrides

from aces_bench.config.compose import compose_spec
from aces_bench.emitters import emit_study
from aces_bench.emitters.plan import plan_study
from aces_bench.run.collect import collect_job
from aces_bench.study.entry import run_study


@needs_bwrap
def test_interrupted_trials_are_reported_once_each_for_their_own_task(tmp_path):
    out = tmp_path / "out"
    spec = compose_spec(study_overrides(root_parent=tmp_path), output_dir=out)
    run_study(spec)
    (job_dir,) = [p for p in (out / "jobs").iterdir() if p.is_dir()]
    # Both trials of the pair lose their result, as when a run dies mid-trial; Harbor
    # names both trial dirs after the same prefix of their task names.
    for result in job_dir.glob("*/result.json"):
        result.unlink()
    trial_dirs = sorted(p for p in job_dir.iterdir() if p.is_dir())
    assert len({d.name.rsplit("__", 1)[0] for d in trial_dirs}) == 1

    plan = plan_study(spec)
    emitted = emit_study(spec, out / "tasks", plan)
    plans = {t.task_id: tp for t, tp in zip(emitted.tasks, plan.tasks, strict=True)}
    records = collect_job(job_dir, plans, n_attempts=1)

    assert len(records) == 2
    assert {r.status for r in records} == {"infra_error"}
    assert all(r.failure_cause == "trial was interrupted: no result.json" for r in records)
    assert sorted(r.trial_dir for r in records) == trial_dirs
    for record in records:
        config = json.loads((record.trial_dir / "config.json").read_text())
        assert Path(config["task"]["path"]).name == record.task_id
