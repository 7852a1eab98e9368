"""`aces-bench grade` on job dirs aces-bench did not produce, and its user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from support.grading import SKILLSBENCH, bash, trajectory, trial_result, write_trial

from aces_bench.cli import main as aces_main
from aces_bench.grading.external import find_trials, infer_workdir
from aces_bench.records.trials import read_grades, table_columns

CASE_INDEPENDENT = ("security", "skill_efficiency")
CASE_DEPENDENT = ("skill_execution", "accuracy", "goal_accuracy", "behavior_check")


@pytest.fixture
def skillsbench() -> Path:
    if not (SKILLSBENCH / "skills").is_dir():
        pytest.skip(f"../shared SkillsBench trials are absent ({SKILLSBENCH.resolve()})")
    return SKILLSBENCH


def grade(args: list[str], capsys) -> tuple[int, str, str]:
    rc = aces_main(["grade", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_real_skillsbench_trials_grade_without_cases(skillsbench, tmp_path, capsys):
    rc, out, err = grade([str(skillsbench), "--out", str(tmp_path)], capsys)
    assert rc == 0, err
    graded = read_grades(tmp_path / "grades.jsonl")
    assert len(graded) == 16
    assert sorted(g.condition for g in graded) == ["baseline"] * 8 + ["with_skill"] * 8
    for g in graded:
        assert g.status == "ok" and g.has_trajectory and g.harness == "gemini-cli" and g.model == "gemini-3-pro-preview"
        for m in CASE_INDEPENDENT:
            assert g.metrics[m].scored, (g.task_id, m, g.metrics[m].unscored_reason)
        for m in CASE_DEPENDENT:
            assert not g.metrics[m].scored and "no case spec" in g.metrics[m].unscored_reason
        assert g.metrics["skill_efficiency"].sub_scores["routing"] is None
        # workdir comes from the instruction; the agents' normal writes are inside it
        assert g.metrics["security"].score == 1.0, g.metrics["security"].evidence
        assert g.first_attempt_pass == g.final_pass == (g.reward >= 1.0)  # the default pass threshold
    wd = {g.task_id: next(n for n in g.notes if n.startswith("workdir")) for g in graded}
    assert wd["dialogue-parser"].startswith("workdir /app:") and wd["3d-scan-calc"].startswith("workdir /root:")
    table = pd.read_parquet(tmp_path / "trials.parquet")
    assert list(table.columns) == list(table_columns()) and len(table) == 16
    assert (tmp_path / "summary.md").read_text() in out
    assert "cases: none given, so only case-independent checks ran" in out


def test_a_wrong_workdir_flags_the_agents_writes(skillsbench, tmp_path, capsys):
    rc, _, err = grade([str(skillsbench / "skills"), "--workdir", "/workspace", "--out", str(tmp_path)], capsys)
    assert rc == 0, err
    graded = read_grades(tmp_path / "grades.jsonl")
    assert len(graded) == 8 and all(g.condition == "with_skill" for g in graded)  # path component 'skills'
    flagged = [g for g in graded if "outside.write_outside_workspace" in json.dumps(g.metrics["security"].details)]
    assert flagged, "writes under /root should count as outside /workspace"


def test_skillsbench_with_a_case_spec(skillsbench, tmp_path, capsys):
    cases = tmp_path / "evals.json"
    cases.write_text(json.dumps({"skill_name": "skillsbench", "evals": [
        {"id": "3d-scan-calc", "prompt": "Mass of the main part.", "expected_skill": "mesh-analysis",
         "expected_output": "the mass is written to /root/mass_report.json"},
        {"id": "dapt-intrusion-detection", "prompt": "Analyse the capture.", "expected_skill": "pcap-analysis",
         "acceptable_skills": ["threat-detection"]},
    ]}))
    rc, out, err = grade([str(skillsbench), "--cases", str(cases), "--out", str(tmp_path / "o")], capsys)
    assert rc == 0, err
    graded = {(g.task_id, g.condition): g for g in read_grades(tmp_path / "o" / "grades.jsonl")}
    assert "(4 of 16 trials matched)" in out
    mesh = graded[("3d-scan-calc", "with_skill")]
    assert mesh.case_id == "3d-scan-calc" and mesh.skill == "mesh-analysis"
    assert mesh.metrics["skill_execution"].sub_scores["activation"] == 1.0  # gemini-cli activate_skill
    assert mesh.metrics["skill_efficiency"].sub_scores["routing"] == 1.0
    assert graded[("3d-scan-calc", "baseline")].metrics["skill_execution"].sub_scores["activation"] == 0.0
    dapt = graded[("dapt-intrusion-detection", "with_skill")]
    assert dapt.metrics["skill_efficiency"].sub_scores["routing"] == 1.0  # threat-detection is acceptable
    # The ground truth has no number and no check: the heuristic judge decides nothing about the
    # answer, and reading the skill is never accuracy, so accuracy is unscored; the outcome is the reward.
    assert not mesh.metrics["accuracy"].scored
    assert mesh.outcome_source == "verifier" and mesh.outcome == mesh.reward
    other = graded[("dialogue-parser", "with_skill")]
    assert not other.metrics["skill_execution"].scored
    assert any("no case in" in n and "'dialogue-parser'" in n for n in other.notes)


def test_a_synthetic_job_dir_with_attempts_failures_and_a_plain_log(tmp_path, capsys):
    jobs = tmp_path / "jobs"
    job = jobs / "my-job"
    job.mkdir(parents=True)
    (job / "result.json").write_text(json.dumps({"id": "x", "n_total_trials": 3, "stats": {}}))  # job-level
    traj = trajectory(bash("cat /app/in.txt", "hello"), bash("cp /app/in.txt /etc/profile.d/x.sh", ""),
                      prompt="Read /app/in.txt and write /app/out.txt.")
    write_trial(job, "task-a__1", traj, trial_result("org/task-a", "task-a__1", 1.0, started=0))
    write_trial(job, "task-a__2", traj, trial_result("org/task-a", "task-a__2", 0.0, started=5))
    failed = trial_result("org/task-b", "task-b__1", None)
    failed["exception_info"] = {"exception_type": "AgentTimeoutError", "exception_message": "took too long",
                                "exception_traceback": "", "occurred_at": "2026-01-01T00:00:00Z"}
    d = write_trial(job, "task-b__1", None, failed)
    (d / "agent" / "agent.log").write_text("$ ls /app\nin.txt\nexit code: 0\n")
    infra = trial_result("org/task-d", "task-d__1", None)
    infra["exception_info"] = {**failed["exception_info"], "exception_type": "EnvironmentStartTimeoutError"}
    write_trial(job, "task-d__1", None, infra)
    (job / "task-c__1").mkdir()
    (job / "task-c__1" / "config.json").write_text("{}")
    (job / "task-c__1" / "agent").mkdir()
    found, broken = find_trials(jobs)
    assert [f.trial_dir.name for f in found] == ["task-a__1", "task-a__2", "task-b__1", "task-d__1"]
    assert broken == [(job / "task-c__1", "trial was interrupted: no result.json")]

    rc, out, err = grade([str(jobs), "--condition", "baseline", "--out", str(tmp_path / "o")], capsys)
    assert rc == 0, err
    graded = {g.trial_name: g for g in read_grades(tmp_path / "o" / "grades.jsonl")}
    a1, a2, b, d = (graded[n] for n in ("task-a__1", "task-a__2", "task-b__1", "task-d__1"))
    assert (a1.attempt, a2.attempt) == (1, 2) and a1.task_id == "task-a" and a1.run_id == "my-job"
    assert a1.condition == "baseline" and "condition baseline: given with --condition" in a1.notes
    assert "workdir /app: inferred from the paths the task instruction names" in a1.notes
    sec = a1.metrics["security"]
    assert sec.score < 1.0 and "persistence" in {f["category"] for f in sec.details["findings"]}
    # a timed-out agent is still graded, here from a synthetic trajectory of its plain-text log
    assert b.status == "timeout" and b.failure_cause.startswith("AgentTimeoutError")
    assert b.has_trajectory and "synthetic trajectory from agent.log" in b.notes and b.metrics["security"].scored
    assert b.metrics["security"].details.get("synthetic_trajectory") is True
    # infrastructure failures are never graded as the agent's: every metric unscored with the cause
    assert d.status == "infra_error" and d.final_pass is None
    assert all(not m.scored and "did not run to completion (infra_error)" in m.unscored_reason
               for m in d.metrics.values())
    assert "1 trial dirs could not be read: counted in unreadable.json, no metrics" in out
    unreadable = json.loads((tmp_path / "o" / "unreadable.json").read_text())
    assert unreadable == [{"trial_dir": str(job / "task-c__1"), "cause": "trial was interrupted: no result.json"}]


def test_infer_workdir_prefers_the_most_named_root():
    assert infer_workdir("Read /root/a.csv and /root/b.csv, write /app/out") == "/root"
    assert infer_workdir("see /home/alice/data/x and /tmp/y") == "/home/alice"
    assert infer_workdir("fetch https://example.com/a/b then /usr/bin/env") is None
    assert infer_workdir("") is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{missing}"], "{missing}: not a folder\n  fix: point at a Harbor job dir"),
        (["{empty}"], "{empty}: no Harbor trial (a folder with a TrialResult result.json) found"),
        (["{empty}", "--cases", "{nocase}"], "{nocase}:skill_name: the evals file names no skill_name"),
        (["{empty}", "--mode", "custom_only"], "--cases: --mode custom_only runs the skill's author graders"),
        (["{empty}", "--judge-base-url", "http://x"], "--judge-model: --judge-base-url/--judge-api-key-env need"),
        (["{empty}", "--weight", "security"], "--weight: --weight 'security' is not METRIC=NUMBER"),
        (["{empty}", "--weight", "nosuch=1"], "grading: weight for 'nosuch' but it is not among grading.metrics"),
    ],
)
def test_bad_input_is_one_message_naming_the_place_and_the_fix(tmp_path, capsys, args, message):
    paths = {"missing": tmp_path / "nope", "empty": tmp_path / "empty", "nocase": tmp_path / "e.json"}
    paths["empty"].mkdir()
    paths["nocase"].write_text('{"evals": [{"id": "a", "prompt": "p", "expected_skill": null}]}')
    args = [a.format(**paths) for a in args]
    rc, _, err = grade([*args, "--out", str(tmp_path / "o")], capsys)
    assert rc == 2
    assert err.startswith("error: ") and message.format(**paths) in err
    assert "Traceback" not in err


# Real gemini-cli trials, one skill per task (the skill the with-skill arm activated), and
# the verifier's reward in each arm (../shared/data/skillsbench/trials/SOURCE.md).
SKILLSBENCH_TASKS = {
    "offer-letter-generator": ("docx", 0.0, 0.0),
    "3d-scan-calc": ("mesh-analysis", 0.0, 1.0),
    "econ-detrending-correlation": ("timeseries-detrending", 0.0, 1.0),
    "dapt-intrusion-detection": ("pcap-analysis", 1.0, 0.0),
    "sales-pivot-analysis": ("xlsx", 0.0, 0.0),
    "powerlifting-coef-calc": ("powerlifting", 0.0, 0.0),
    "court-form-filling": ("pdf", 0.0, 0.0),
    "dialogue-parser": ("dialogue-graph", 0.667, 0.667),
}


def test_real_skills_each_on_one_case_never_pass_the_gate(skillsbench, tmp_path, capsys):
    # The lifts are the verifier rewards' (composite lift was positive where the reward lift was
    # -1 or 0). Each skill has one case here: one pair never passes the gate (issue 22), not even
    # pcap-analysis, whose reward rose: 1 win of 1 is p = 0.5 and short of 5 cases won.
    cases = tmp_path / "evals.json"
    cases.write_text(json.dumps({"skill_name": "skillsbench", "evals": [
        {"id": task, "prompt": f"SkillsBench task {task}.", "expected_skill": skill}
        for task, (skill, _, _) in SKILLSBENCH_TASKS.items()]}))
    rc, _, err = grade([str(skillsbench), "--cases", str(cases), "--out", str(tmp_path / "g")], capsys)
    assert rc == 0, err
    rc = aces_main(["report", str(tmp_path / "g"), "--out", str(tmp_path / "r"), "--fail-under-lift", "0.05"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 1
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    lifts = {r["group"]["skill"]: r["lift"] for r in summary["by_skill"] if r["outcome"] == "outcome"}
    assert lifts == pytest.approx({skill: with_ - base for skill, with_, base in SKILLSBENCH_TASKS.values()}, abs=1e-3)
    failing = {line.split()[1].rstrip(":"): line for line in err if line.startswith("FAIL ")}
    assert set(failing) == {skill for skill, _, _ in SKILLSBENCH_TASKS.values()}
    assert all(": not enough cases: 1 case(s)" in line for line in failing.values()), failing
    assert "0 won by more than +0.050, 1 lost" in failing["mesh-analysis"]
    assert "1 won by more than +0.050, 0 lost" in failing["pcap-analysis"]
    assert any(line.startswith("gate: 8 of 8 skill(s) fail") for line in err)


def test_a_trial_nothing_names_the_arm_of_is_refused_not_assumed(tmp_path, capsys):
    """No --condition, no task dir (its path names one that is gone), no skills/noskills
    folder, no skills in the agent config: grade refuses, naming the trial and the fix.
    It used to grade it as with_skill, "assumed", which silently moves a baseline's
    score into the other arm."""
    job = tmp_path / "jobs" / "my-job"
    job.mkdir(parents=True)
    traj = trajectory(bash("cat /app/in.txt", "hello"))
    result = trial_result("org/task-a", "task-a__1", 1.0)
    result["config"]["task"]["path"] = str(tmp_path / "deleted-study" / "tasks" / "abc123")
    write_trial(job, "task-a__1", traj, result)
    write_trial(job, "task-b__1", traj, trial_result("org/task-b", "task-b__1", 0.0))
    rc, out, err = grade([str(tmp_path / "jobs"), "--out", str(tmp_path / "o")], capsys)
    assert rc == 2 and "Traceback" not in err and not (tmp_path / "o" / "grades.jsonl").exists()
    assert err.startswith("error: ") and "2 trial(s) name no arm (with_skill or baseline), so none is graded" in err
    assert f"{job / 'task-a__1'} (its task dir {tmp_path / 'deleted-study' / 'tasks' / 'abc123'} is gone)" in err
    assert str(job / "task-b__1") in err and "fix: " in err and "--condition" in err
    # A folder that names the arm, or --condition, grades them.
    marked = tmp_path / "marked" / "noskills"
    marked.parent.mkdir()
    (tmp_path / "jobs").rename(marked)
    rc, _, err = grade([str(tmp_path / "marked"), "--out", str(tmp_path / "m")], capsys)
    assert rc == 0, err
    graded = read_grades(tmp_path / "m" / "grades.jsonl")
    assert {g.condition for g in graded} == {"baseline"}
    assert all("condition baseline: from the path component 'noskills'" in g.notes for g in graded)
