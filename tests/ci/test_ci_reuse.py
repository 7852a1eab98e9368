"""``aces-bench ci`` twice: the second run, after a one-line change to one skill's
SKILL.md, runs only that skill's with-skill trials (and its null arm's none): every
baseline and null trial comes from the reuse store, and the console and the report say
how many and how old (reference agent, local sandbox: real trials)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from support.ci import ci_skill, git, run_ci, two_skill_repo

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.mark.sandbox
@needs_git
def test_a_skill_md_change_runs_no_baseline_trial_on_the_second_ci_run(tmp_path):
    repo = two_skill_repo(tmp_path, "no_regression: true\nnull_arm: require_no_effect\n")
    first = run_ci(repo, tmp_path / "ci1", "--save-baseline")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    before = pd.read_parquet(tmp_path / "ci1" / "run" / "trials.parquet")
    n_a = int(((before["skill"] == "colsum-a") & (before["condition"] == "with_skill")).sum())  # its cases
    stored = int(before["condition"].isin(["baseline", "null"]).sum())
    assert stored == 4 * n_a  # two skills, a baseline and a null trial per case
    assert f"ci: baseline reuse: none of {stored} baseline/null trial(s) found in the store" in first.stdout

    md = repo / "skills" / "colsum-a" / "SKILL.md"
    md.write_text(md.read_text() + "\nPrefer the script over reading the file by hand.\n")
    git(repo, "commit", "-qam", "colsum-a: one more line")
    out = tmp_path / "ci2"
    second = run_ci(repo, out, "--since", "HEAD~1")
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    assert "ci: run colsum-a: changed: SKILL.md" in second.stdout and "ci: run colsum-b" not in second.stdout
    assert f"ci: baseline reuse: {2 * n_a} of {2 * n_a} baseline/null trial(s) from the store" in second.stdout

    run = out / "run"
    trials = pd.read_parquet(run / "trials.parquet")
    ran = trials.loc[~trials["trial_dir"].astype(str).str.contains("/jobs/reused/")]
    assert set(ran["condition"]) == {"with_skill"} and len(ran) == n_a
    assert trials.loc[trials["condition"].isin(["baseline", "null"]), "trial_dir"].str.contains("/jobs/reused/").all()
    summary = json.loads((out / "packet" / "report" / "summary.json").read_text())
    assert summary["baseline_reuse"][0]["reused"] == 2 * n_a and summary["baseline_reuse"][0]["run"] == 0
    harbor_jobs = [j for j in (run / "jobs").iterdir() if j.name != "reused"]
    assert sum(1 for j in harbor_jobs for t in j.iterdir() if (t / "result.json").is_file()) == n_a


def test_ci_refuses_a_sequential_study_whose_policy_it_cannot_answer(tmp_path):
    from aces_bench.ci.policy import Policy
    from aces_bench.ci.run import _study
    from aces_bench.core.errors import ConfigError
    from aces_bench.core.gate import GateSettings

    skill = tmp_path / "skills" / "colsum-a"
    ci_skill(skill, "colsum-a")

    class Change:
        path = skill

    with pytest.raises(ConfigError, match="second threshold"):
        _study([Change()], ["study.sequential=true"], tmp_path / "run", policy=Policy(min_outcome_lift_lower_bound=0.0))
    with pytest.raises(ConfigError, match="policy's gate"):
        _study([Change()], ["study.sequential=true", "study.gate.threshold=0.1"], tmp_path / "run",
               policy=Policy(gate=GateSettings(threshold=0.0)))
    assert not (tmp_path / "run").exists()  # refused before any trial


@pytest.mark.sandbox
@needs_git
def test_a_sequential_ci_run_gates_by_the_designs_decision_and_reuses_baselines(tmp_path):
    repo = two_skill_repo(tmp_path, "no_regression: true\ngate:\n  threshold: 0.0\n")
    first = run_ci(repo, tmp_path / "ci1", "--save-baseline", "study.sequential=true")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
    verdict = json.loads((tmp_path / "ci1" / "packet" / "verdict.json").read_text())
    checks = {c["name"]: c for c in verdict["checks"]}
    assert verdict["passed"] and "sequential" in checks["gate"]["reason"]
    assert checks["no regression"]["status"] == "not run" and "sequential" in checks["no regression"]["reason"]
    ledger = json.loads((tmp_path / "ci1" / "run" / "sequential.json").read_text())
    assert {s["design"]["gate"]["threshold"] for s in ledger["skills"].values()} == {0.0}
    # The two skills are one family: every look was read at its Holm level, and ci says so.
    assert {lk["family"] for s in ledger["skills"].values() for lk in s["looks"]} == {"Holm over 2 skills"}
    assert "Holm across the study's 2 skills" in checks["gate"]["reason"]
    summary = json.loads((tmp_path / "ci1" / "packet" / "report" / "summary.json").read_text())
    assert {r["skill"] for r in summary["sequential"]} == {"colsum-a", "colsum-b"}
    assert {v["skill"]: v["verdict"] for v in summary["gate"]} == {"colsum-a": "helps", "colsum-b": "helps"}

    md = repo / "skills" / "colsum-a" / "SKILL.md"
    md.write_text(md.read_text() + "\nPrefer the script over reading the file by hand.\n")
    git(repo, "commit", "-qam", "colsum-a: one more line")
    second = run_ci(repo, tmp_path / "ci2", "--since", "HEAD~1", "study.sequential=true")
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-3000:]
    trials = pd.read_parquet(tmp_path / "ci2" / "run" / "trials.parquet")
    ran = trials.loc[~trials["trial_dir"].astype(str).str.contains("/jobs/reused/") & (trials["status"] != "skipped")]
    assert set(ran["condition"]) == {"with_skill"}, ran[["condition", "status"]].value_counts()
