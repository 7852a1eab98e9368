"""Golden grades of real trajectories: one per harness, written by the harness itself.

The trajectories (trimmed) and their expected scores, sub-scores and evidence are
committed under tests/golden/real_grades/ (``make_real_grades.py`` regenerates them and
says where each came from), so this runs on a clean clone without ../shared. A change
to tool-call parsing or to a grader shows as a failure naming the harness and metric;
after an intended change, regenerate and commit the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.golden import grade_committed

ROOT = Path(__file__).resolve().parent / "real_grades"
HARNESSES = ("gemini-cli", "claude-code", "codex", "reference", "terminus-2")


@pytest.mark.parametrize("harness", HARNESSES)
def test_real_trajectory_grades_as_committed(harness):
    expected = json.loads((ROOT / f"{harness}.expected.json").read_text(encoding="utf-8"))
    got = grade_committed(ROOT, harness, expected["inputs"])
    assert got["agent"] == expected["agent"] and got["n_steps"] == expected["n_steps"]
    for name, want in expected["metrics"].items():
        assert got["metrics"][name] == want, f"{harness} {name}: graded differently (tests/golden/make_real_grades.py)"
    assert set(got["metrics"]) == set(expected["metrics"])


def test_each_harness_activates_the_skill_its_own_way():
    # What the goldens pin, in words: activation is found through each harness's own tool call.
    evidence = {h: json.loads((ROOT / f"{h}.expected.json").read_text())["metrics"]["skill_execution"] for h in HARNESSES}
    assert all(evidence[h]["sub_scores"]["activation"] == 1.0 for h in HARNESSES)
    calls = {h: json.loads((ROOT / h / "agent" / "trajectory.json").read_text()) for h in HARNESSES}
    names = {h: {c["function_name"] for s in calls[h]["steps"] for c in s.get("tool_calls") or []} for h in HARNESSES}
    assert "activate_skill" in names["gemini-cli"] and "Skill" in names["claude-code"]
    assert "exec_command" in names["codex"] and names["reference"] == {"bash"}
    assert "bash_command" in names["terminus-2"]


def test_terminus2_is_graded_over_its_continuations_merged():
    # terminus-2 summarised and continued: trajectory.json stops at the hand-off and names
    # trajectory.cont-1.json; the script ran only in the continuation. The grades are over
    # the merged steps, so the execution evidence points at a step the first file lacks.
    agent = ROOT / "terminus-2" / "agent"
    first = json.loads((agent / "trajectory.json").read_text())
    assert first["continued_trajectory_ref"] == "trajectory.cont-1.json"
    cont = json.loads((agent / "trajectory.cont-1.json").read_text())
    assert any(s.get("is_copied_context") for s in cont["steps"])
    assert not any("colsum.py" in json.dumps(s.get("tool_calls")) for s in first["steps"])
    expected = json.loads((ROOT / "terminus-2.expected.json").read_text())
    assert expected["n_steps"] > len(first["steps"])
    execution = next(e for e in expected["metrics"]["skill_execution"]["evidence"] if e["check"] == "execution")
    assert execution["passed"] and execution["step_id"] > max(s["step_id"] for s in first["steps"])
