"""No check, no reward, in the sandbox too: a real trial of a case without assertions.

The in-sandbox verifier (aces_bench/verifier/check_answer.py) writes ``reward.json``
as ``{}`` for such a case; Harbor must accept it (no RewardFileNotFoundError, no
parse error), the trial must be collected as finished with no reward, and no file
the run leaves behind may say 1.0.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.study.entry import run_study
from aces_bench.verifier.check_answer import UNSCORED

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"
CHECKER = ROOT / "aces_bench" / "verifier" / "check_answer.py"


def test_the_checker_writes_no_reward_for_a_case_without_checks(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "answer.txt").write_text("total=141.75")
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"id": "c", "checks": []}))
    run = subprocess.run([sys.executable, str(CHECKER), str(case), str(tmp_path / "ws"), str(tmp_path / "logs")],
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "logs" / "reward.json").read_text()) == {}
    details = json.loads((tmp_path / "logs" / "details.json").read_text())
    assert details["reward"] is None and details["unscored"] == UNSCORED and details["answer_file_present"]
    # With a check the reward is the check's, as before.
    case.write_text(json.dumps({"id": "c", "checks": [{"kind": "number", "value": 141.75, "tolerance": 0.001}]}))
    subprocess.run([sys.executable, str(CHECKER), str(case), str(tmp_path / "ws"), str(tmp_path / "logs")],
                   check=True, timeout=30)
    assert json.loads((tmp_path / "logs" / "reward.json").read_text()) == {"reward": 1.0}


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed; the local backend needs it")
def test_a_real_trial_without_checks_is_finished_and_unscored_everywhere(tmp_path):
    skill = tmp_path / "csv-column-sum"
    shutil.copytree(SKILL, skill)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    (case,) = [c for c in evals["evals"] if c["id"] == "explicit-1"]
    del case["assertions"]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    out = tmp_path / "out"
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "skill.cases=[explicit-1]",
                         f"+backend.kwargs.root_parent={tmp_path}", "report=false"], output_dir=out)
    run_study(spec)

    results = sorted((out / "jobs").glob("*/*/result.json"))
    assert len(results) == 2  # with_skill and baseline
    for path in results:
        result = json.loads(path.read_text())
        assert result["exception_info"] is None, result["exception_info"]
        assert result["verifier_result"]["rewards"] == {}
        details = json.loads((path.parent / "verifier" / "details.json").read_text())
        assert details["reward"] is None and details["unscored"] == UNSCORED
    grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    assert len(grades) == 2
    for g in grades:
        assert g["status"] == "ok" and g["reward"] is None
        # Pass is decided once, from the outcome (issue 22): here the judged one, else undecided.
        assert g["final_pass"] is (None if g["outcome"] is None else g["outcome"] >= 1.0)
        assert g["outcome_source"] in ("judged", None)
    # No artifact of the run claims a reward it never checked.
    for path in (out / "jobs").rglob("*.json"):
        data = path.read_text(errors="replace")
        assert '"reward": 1.0' not in data and '"reward":1.0' not in data, path
