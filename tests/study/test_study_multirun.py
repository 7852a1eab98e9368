"""A Hydra multirun sweep: one output dir per member, each with its own table and
Harbor job, laid out as ``multirun/<study>/<override_dirname>/``; re-running the
identical sweep resumes every member instead of redoing its trials."""

from __future__ import annotations

from support.studies import needs_bwrap, read_table, run_cli, trial_results

from aces_bench.records.trials import read_trials_table

SWEEP = ("-m", "harness=reference", "workspace=isolation,group", "decoys=paper", "skill.cases=[explicit-1]",
         "report=false")
N_SKILLS = 4  # the example target skills, one explicit case each
N_DECOYS = 4  # the paper's decoy set


def member(workspace: str) -> str:
    # Hydra sorts the overrides by key; study, emit_only and report are left out.
    return f"decoys=paper,harness=reference,skill.cases=[explicit-1],workspace={workspace}"


@needs_bwrap
def test_multirun_writes_one_output_dir_per_member(tmp_path):
    sweep_dir = tmp_path / "multirun" / "demo"
    proc = run_cli(*SWEEP, f"hydra.sweep.dir={sweep_dir}", timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    members = sorted(p.name for p in sweep_dir.iterdir() if p.is_dir())
    assert members == sorted([member("group"), member("isolation")])
    expected = {  # decoy-set label; visible skills with the skill, in the baseline
        "isolation": ("none", 1, 0),  # isolation stages only the target, whatever decoys says
        "group": ("paper", 1 + N_DECOYS, N_DECOYS),
    }
    first_results = {}
    for workspace, (decoy_set, with_skill, baseline) in expected.items():
        out = sweep_dir / member(workspace)
        for name in ("trials.parquet", "trials.csv", "grades.jsonl", "provenance.json", "tasks"):
            assert (out / name).exists(), f"{out.name} lacks {name}"
        table = read_table(out)
        assert len(table) == 2 * N_SKILLS
        assert set(table["workspace_mode"]) == {workspace}
        assert set(table["decoy_set"]) == {decoy_set}
        assert set(table["case_id"]) == {"explicit-1"}
        assert set(table["status"]) == {"ok"}
        visible = table.groupby("condition")["n_visible_skills"].unique()
        assert list(visible["with_skill"]) == [with_skill] and list(visible["baseline"]) == [baseline]
        # Each member ran its own Harbor job inside its own dir.
        jobs = [p for p in (out / "jobs").iterdir() if p.is_dir()]
        assert len(jobs) == 1
        assert all(str(d).startswith(str(jobs[0])) for d in table["trial_dir"])
        first_results.update({name: p.stat().st_mtime_ns for name, p in trial_results(out).items()})
    assert len(first_results) == 2 * 2 * N_SKILLS

    # The sweep dir reads as the union of its members.
    union = read_trials_table(sweep_dir)
    assert len(union) == 2 * 2 * N_SKILLS
    assert sorted(union["workspace_mode"].value_counts().items()) == [("group", 8), ("isolation", 8)]

    # The identical sweep again: every member resumes with nothing left to run.
    again = run_cli(*SWEEP, f"hydra.sweep.dir={sweep_dir}", timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    log = again.stdout + again.stderr
    assert log.count(f"trials: {2 * N_SKILLS} in this job, {2 * N_SKILLS} already done, 0 to run") == 2
    after = {}
    for workspace in expected:
        after.update({name: p.stat().st_mtime_ns for name, p in trial_results(sweep_dir / member(workspace)).items()})
    assert after == first_results
