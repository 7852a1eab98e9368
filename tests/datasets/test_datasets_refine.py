"""`dataset refine --from-results`: lift tool-call steps and agreed answers from passing trials.

The results dir is written with the project's real formats: GradedTrial lines in
grades.jsonl and ATIF trajectories recorded by the reference agent's TrajectoryRecorder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from harbor.models.trajectories import Agent
from support.datasets import GOLDEN, SKILL_NAME, skill_copy

from aces_bench.agents.atif import TrajectoryRecorder
from aces_bench.cases import load_suite
from aces_bench.core.errors import EvalsError
from aces_bench.datasets.lift import aligned_answer, common_steps
from aces_bench.datasets.refine import refine_dataset
from aces_bench.records.trials import GradedTrial

DIRECTIVE = "reads csv-stats/SKILL.md before running any script"
READ = "cat /skills/csv-stats/SKILL.md"
RUN = "python3 /skills/csv-stats/scripts/stats.py data/sales.csv amount"
# Only steps that touch the skill are lifted ("lists the available skills" is how the agent looked around).
LIFTED = ["reads csv-stats/SKILL.md", "runs csv-stats/scripts/stats.py"]
CHECK = [{"kind": "contains", "value": "141.75"}]

SUITE = {
    "skill_name": SKILL_NAME,
    "evals": [
        {"id": "author-full", "prompt": "Total data/sales.csv.", "expected_output": "141.75",
         "expected_behavior": ["my behavior"], "files": ["evals/files/sales.csv"]},
        {"id": "author-empty", "prompt": "Total the sales file.", "files": ["evals/files/sales.csv"],
         "assertions": CHECK},
        {"id": "no-check", "prompt": "Look at the sales file.", "files": ["evals/files/sales.csv"]},
        {"id": "disagree", "prompt": "Total it somehow.", "files": ["evals/files/sales.csv"]},
        {"id": "intent-1", "prompt": "What is the total of the amount column in data/sales.csv?",
         "expected_output": "total=141.75", "source": "eval_md", "files": ["evals/files/sales.csv"],
         "expected_behavior": [DIRECTIVE, "runs scripts/stats.py on data/sales.csv"]},
        {"id": "tpl-explicit", "kind": "explicit", "prompt": "Use the csv-stats skill.", "source": "template",
         "expected_behavior": [DIRECTIVE, "template guess"], "assertions": CHECK},
        {"id": "no-trials", "prompt": "Never run.", "source": "template"},
    ],
}


def _trajectory(path: Path, commands: list[str], answer: str) -> None:
    rec = TrajectoryRecorder(Agent(name="aces-reference", version="test"), session_id=path.parent.name, clock=None)
    rec.user("task")
    for cmd in ["ls -1 -- /skills", *commands]:
        rec.action("step", cmd, stdout="ok", stderr=None, exit_code=0)
    rec.final(answer)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rec.trajectory().model_dump_json(exclude_none=True))


def _trial(results: Path, name: str, case_id: str, condition: str, reward: float, answer: str,
           commands: list[str] | None = None) -> GradedTrial:
    trial_dir = results / "jobs" / "job-1" / name
    _trajectory(trial_dir / "agent" / "trajectory.json", [READ, RUN] if commands is None else commands, answer)
    return GradedTrial(
        task_id=f"{case_id}-{condition}", attempt=int(name[-1]), skill=SKILL_NAME, case_id=case_id, case_kind=None,
        negative_control=False, condition=condition, workspace_mode="isolation", decoy_set="none",
        n_visible_skills=1, status="ok", failure_cause=None, trial_name=name,
        trial_dir=f"jobs/job-1/{name}",  # relative: resolved against the results dir
        reward=reward, has_trajectory=True, final_answer=answer,
    )


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    trials = []
    for case in ("author-full", "author-empty", "intent-1", "tpl-explicit", "no-check"):
        trials.append(_trial(results, f"{case}-w1", case, "with_skill", 1.0, "total=141.75"))
        # A second passing trial looks at the data first: that step is not common, so not lifted.
        trials.append(_trial(results, f"{case}-w2", case, "with_skill", 1.0, " Total=141.75 \n",
                             ["head data/sales.csv", READ, RUN]))
        trials.append(_trial(results, f"{case}-f3", case, "with_skill", 0.0, "about 140", ["wc -l data/sales.csv"]))
        trials.append(_trial(results, f"{case}-b4", case, "baseline", 1.0, "141.75", ["cat data/sales.csv"]))
    trials.append(_trial(results, "disagree-w1", "disagree", "with_skill", 1.0, "141.75"))
    trials.append(_trial(results, "disagree-w2", "disagree", "with_skill", 1.0, "total is 141.75"))
    results.mkdir(exist_ok=True)
    (results / "grades.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in trials))
    return results


def _skill(tmp_path: Path) -> Path:
    skill = skill_copy(tmp_path)
    (skill / "evals" / "evals.json").write_text(json.dumps(SUITE))
    shutil.copyfile(GOLDEN / "valid" / "EVAL.md", skill / "EVAL.md")
    return skill


def test_refine_proposes_only_where_no_author_value_exists(tmp_path):
    skill, results = _skill(tmp_path), _results(tmp_path)
    report = refine_dataset(skill, results, pass_threshold=1.0)
    cases = {c.id: c for c in load_suite(skill, SKILL_NAME).evals}
    assert report.written

    full = cases["author-full"]
    assert (full.expected_output, full.expected_behavior, full.proposed) == ("141.75", ["my behavior"], [])

    empty = cases["author-empty"]
    assert empty.expected_behavior == [DIRECTIVE, *LIFTED]  # EVAL.md directive first, then observed steps
    assert empty.expected_output == "total=141.75"  # 2 of 2 passing trials agree (case and spacing folded)
    assert empty.proposed == ["expected_behavior", "expected_output"]

    intent = cases["intent-1"]
    assert intent.expected_output == "total=141.75" and "expected_output" not in intent.proposed
    assert intent.expected_behavior == [DIRECTIVE, "runs scripts/stats.py on data/sales.csv", *LIFTED]

    tpl = cases["tpl-explicit"]
    assert tpl.expected_behavior == [DIRECTIVE, *LIFTED] and tpl.expected_output == "total=141.75"

    assert cases["disagree"].expected_output is None and cases["no-trials"].expected_output is None
    text = report.render()
    assert "changed author-empty.expected_output: 2 of 2 passing trials agree" in text
    assert ("changed author-empty.expected_behavior: 2 step(s) common to 2 passing trial(s), "
            "after 1 EVAL.md directive(s)") in text
    assert "kept author-full.expected_behavior: author-written (observed: " + "; ".join(LIFTED) + ")" in text
    assert "kept author-full.expected_output: author-written (2 of 2 passing trials agree on 'total=141.75')" in text
    assert "kept disagree.expected_output: not proposed (only 1 of 2 passing trial(s) agree (need 2))" in text
    assert "kept no-trials: no passing with-skill trial" in text
    # Two agreeing passing trials of a case without any check are no ground truth.
    assert cases["no-check"].expected_output is None
    assert ("kept no-check.expected_output: not proposed (the case has no deterministic check, so a passing "
            "reward says nothing about the answer; add a check or write the expected output yourself)") in text
    assert not any("ls" in b for b in cases["no-check"].expected_behavior)


def test_refine_shows_a_reviewable_diff_and_the_cli_writes_only_with_apply(tmp_path):
    import subprocess
    import sys

    skill, results = _skill(tmp_path), _results(tmp_path)
    before = (skill / "evals" / "evals.json").read_bytes()
    run = subprocess.run([sys.executable, "-m", "aces_bench.cli", "dataset", "refine", str(skill),
                          "--from-results", str(results)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("proposed (not written; review the diff, then --apply): ")
    assert "--- a/evals/evals.json\n+++ b/evals/evals.json" in run.stdout
    assert '+      "expected_output": "total=141.75",' in run.stdout
    assert (skill / "evals" / "evals.json").read_bytes() == before
    applied = subprocess.run([sys.executable, "-m", "aces_bench.cli", "dataset", "refine", str(skill),
                              "--from-results", str(results), "--apply"], capture_output=True, text=True, timeout=120)
    assert applied.returncode == 0 and applied.stdout.startswith("wrote: ")
    assert (skill / "evals" / "evals.json").read_bytes() != before


def test_refine_is_idempotent_and_keeps_its_own_proposals_replaceable(tmp_path):
    skill, results = _skill(tmp_path), _results(tmp_path)
    refine_dataset(skill, results, pass_threshold=1.0)
    first = (skill / "evals" / "evals.json").read_bytes()
    again = refine_dataset(skill, results, pass_threshold=1.0)
    assert not again.written and (skill / "evals" / "evals.json").read_bytes() == first
    assert again.render().startswith("unchanged: ")


def test_dry_run_writes_nothing(tmp_path):
    skill, results = _skill(tmp_path), _results(tmp_path)
    before = (skill / "evals" / "evals.json").read_bytes()
    report = refine_dataset(skill, results, pass_threshold=1.0, dry_run=True)
    assert report.changes and not report.written
    assert (skill / "evals" / "evals.json").read_bytes() == before


def test_trials_parquet_is_read_when_grades_are_absent(tmp_path):
    skill, results = _skill(tmp_path), _results(tmp_path)
    rows = [json.loads(line) for line in (results / "grades.jsonl").read_text().splitlines()]
    for r in rows:  # the table has no final answer: it comes from the retained workspace copy
        answer = Path(results / r["trial_dir"] / "artifacts" / "workspace" / "answer.txt")
        answer.parent.mkdir(parents=True)
        answer.write_text(r["final_answer"])
    cols = ["skill", "case_id", "condition", "status", "reward", "trial_dir", "trial_name"]
    pd.DataFrame([{c: r[c] for c in cols} for r in rows]).to_parquet(results / "trials.parquet")
    (results / "grades.jsonl").unlink()
    refine_dataset(skill, results, pass_threshold=1.0)
    assert {c.id: c for c in load_suite(skill, SKILL_NAME).evals}["author-empty"].expected_output == "total=141.75"


def test_min_agree_and_threshold_are_honoured(tmp_path):
    skill, results = _skill(tmp_path), _results(tmp_path)
    report = refine_dataset(skill, results, pass_threshold=1.0, min_agree=3)
    assert "kept author-empty.expected_output: not proposed (only 2 of 2 passing trial(s) agree (need 3))" in report.render()
    report = refine_dataset(skill, results, pass_threshold=1.5, dry_run=True)
    assert "kept author-empty: no passing with-skill trial" in report.render()


def test_results_dir_without_results_is_a_clear_error(tmp_path):
    skill = _skill(tmp_path)
    with pytest.raises(EvalsError, match="no grades.jsonl or trials.parquet in the results dir"):
        refine_dataset(skill, tmp_path / "empty", pass_threshold=1.0)


def test_common_steps_and_aligned_answer_are_pure():
    assert common_steps([["a", "b", "c"], ["a", "x", "c"], ["a", "c", "b"]]) == ["a", "c"]
    assert common_steps([]) == []
    assert aligned_answer(["42", " 42 ", "41"]) == ("42", "2 of 3 passing trials agree")
    assert aligned_answer(["42"], min_agree=2) == (None, "only 1 of 1 passing trial(s) agree (need 2)")
    assert aligned_answer(["", None or ""]) == (None, "no passing trial left a final answer")


def test_split_answers_are_not_a_proposal():
    assert aligned_answer(["a", "a", "b", "b"]) == (None, "answers disagree (2 distinct among 4 passing trials)")


# --- ground truth only from fully verified trials, never against the case's own text -----------

WEAK_SUITE = {
    "skill_name": SKILL_NAME,
    "evals": [
        # Issue 27: a generated case whose only check is `contains "EUR"`; every agent answered a wrong total.
        {"id": "weak-eur", "prompt": "Total the invoices in EUR.", "source": "template",
         "expected_output": "Total: 65.00 EUR", "assertions": [{"kind": "contains", "value": "EUR"}]},
        # An author case whose expected output an earlier refine proposed, checked only by `contains "Total"`.
        {"id": "weak-total", "prompt": "What is the total?", "expected_output": "Total: 65.00 EUR",
         "proposed": ["expected_output"], "assertions": [{"kind": "contains", "value": "Total"}]},
        # Prose expected output: states no value, so an agreed verified answer may sharpen it.
        {"id": "prose", "prompt": "Sum the invoices.", "source": "template",
         "expected_output": "the sum of the invoice amounts", "assertions": [{"kind": "contains", "value": "Total"}]},
        # The checks were tightened after the run: the trials' answer fails the case's current check.
        {"id": "retightened", "prompt": "Sum again.", "source": "template",
         "assertions": [{"kind": "number", "value": 65.0, "tolerance": 0.001}]},
        # The verifier recorded a failed check on a reward of 1.0 (a partial-credit verifier): not verified.
        {"id": "half-checked", "prompt": "Sum once more.", "source": "template",
         "assertions": [{"kind": "contains", "value": "Total"}, {"kind": "contains", "value": "65"}]},
        # Only a check of another workspace file: nothing vouches for the answer text.
        {"id": "other-file", "prompt": "Write the report.", "source": "template",
         "assertions": [{"kind": "contains", "value": "EUR", "file": "report.txt"}]},
    ],
}


def _weak_results(tmp_path: Path, answer: str = "Total: 53.00 EUR") -> Path:
    results = tmp_path / "weak-results"
    trials = []
    for case in ("weak-eur", "weak-total", "prose", "retightened", "half-checked", "other-file"):
        for n in (1, 2):
            t = _trial(results, f"{case}-w{n}", case, "with_skill", 1.0, answer)
            trials.append(t)
            retained = results / t.trial_dir / "artifacts" / "workspace" / "answer.txt"
            retained.parent.mkdir(parents=True, exist_ok=True)
            retained.write_text(answer + "\n")
            if case == "half-checked":
                details = results / t.trial_dir / "verifier" / "details.json"
                details.parent.mkdir(parents=True, exist_ok=True)
                details.write_text(json.dumps({"checks": [
                    {"check": {"kind": "contains", "value": "Total"}, "passed": True, "detail": "found"},
                    {"check": {"kind": "contains", "value": "65"}, "passed": False, "detail": "did not find"}]}))
    results.mkdir(exist_ok=True)
    (results / "grades.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in trials))
    return results


def _weak_skill(tmp_path: Path) -> Path:
    skill = skill_copy(tmp_path)
    (skill / "evals" / "evals.json").write_text(json.dumps(WEAK_SUITE))
    return skill


def test_a_weak_check_passed_by_a_wrong_answer_never_overwrites_the_expected_output(tmp_path):
    skill, results = _weak_skill(tmp_path), _weak_results(tmp_path)
    report = refine_dataset(skill, results, pass_threshold=1.0)
    cases = {c.id: c for c in load_suite(skill, SKILL_NAME).evals}
    assert cases["weak-eur"].expected_output == "Total: 65.00 EUR"
    assert cases["weak-total"].expected_output == "Total: 65.00 EUR"
    text = report.render()
    assert ("kept weak-eur.expected_output: not proposed ('Total: 53.00 EUR', 2 of 2 passing trials agree, "
            "contradicts 'Total: 65.00 EUR': it drops 65 that the current expected output states; if the current "
            "one is wrong, re-run with --confirm weak-eur)") in text
    assert "--confirm weak-total)" in text
    # What no check vouches for, or what the case's own checks refute, is never ground truth.
    assert cases["retightened"].expected_output is None
    assert ("kept retightened.expected_output: not proposed ('Total: 53.00 EUR' fails the case's own check(s): "
            "number 65.0 (no number within 0.001 of 65))")  # the strict checker prints 65 (issue 22) in text
    assert cases["half-checked"].expected_output is None
    assert ("kept half-checked.expected_output: not proposed (none of the 2 passing trial(s) passed every "
            "deterministic check (2 failed at least one))") in text
    assert cases["other-file"].expected_output is None
    assert "kept other-file.expected_output: not proposed (none of the case's checks reads the answer file" in text
    # A prose expected output states no value: the verified, agreed answer may sharpen it (for review).
    assert cases["prose"].expected_output == "Total: 53.00 EUR" and "expected_output" in cases["prose"].proposed
    assert ("changed prose.expected_output: 2 of 2 passing trials agree; no check pins its value (only words are "
            "checked): review it before --apply") in text


def test_the_author_confirms_a_contradicting_proposal_by_case_id(tmp_path):
    import subprocess
    import sys

    skill, results = _weak_skill(tmp_path), _weak_results(tmp_path, "Total: 64.00 EUR")
    report = refine_dataset(skill, results, pass_threshold=1.0, confirm=["weak-eur"])
    cases = {c.id: c for c in load_suite(skill, SKILL_NAME).evals}
    assert cases["weak-eur"].expected_output == "Total: 64.00 EUR"
    assert cases["weak-total"].expected_output == "Total: 65.00 EUR"  # not confirmed: kept
    assert ("changed weak-eur.expected_output: 2 of 2 passing trials agree (confirmed by the author over "
            "'Total: 65.00 EUR')") in report.render()
    bad = subprocess.run([sys.executable, "-m", "aces_bench.cli", "dataset", "refine", str(skill),
                          "--from-results", str(results), "--confirm", "weak-eru"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "--confirm names case ids the evals file does not hold: weak-eru" in bad.stderr
    assert "weak-eur" in bad.stderr  # the valid ids are listed
