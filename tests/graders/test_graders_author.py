"""Author graders run as real host processes: contract, failures, isolation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from support.grading import skill_with_graders

from aces_bench.cases import EvalCase
from aces_bench.core.errors import EvalsError
from aces_bench.graders.author import (
    AuthorContext,
    discover_author_graders,
    parse_reply,
    run_author_graders,
)

CASE = EvalCase.model_validate({"id": "explicit-1", "prompt": "p", "expected_skill": "invoice-reconciler"})

# Reads an intermediate file the agent left next to its answer: not only the answer.
INTERMEDIATE = """
import json, os, pathlib
ws = pathlib.Path(os.environ["ACES_WORKSPACE"])
step = json.loads((ws / "work" / "step1.json").read_text())
answer = pathlib.Path(os.environ["ACES_FINAL_ANSWER"]).read_text()
ok = step["unmatched"] == 2 and "1400.07" in answer
print("checking", step)
print(json.dumps({"score": 1.0 if ok else 0.25, "passed": ok, "details": {"unmatched": step["unmatched"]}}))
"""


def ctx(workspace: Path | None, skill_dir: Path, answer: str = "total 1400.07", **kw) -> AuthorContext:
    base = {"skill": "invoice-reconciler", "skill_dir": skill_dir, "case": CASE, "case_id": CASE.id,
            "condition": "with_skill", "trial_name": "t__1", "reward": 1.0, "workspace": workspace,
            "trajectory_path": None, "final_answer": answer}
    return AuthorContext(**{**base, **kw})


def run(graders, c, **kw):
    return asyncio.run(run_author_graders(graders, c, **kw))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "retained"
    (ws / "work").mkdir(parents=True)
    (ws / "work" / "step1.json").write_text(json.dumps({"unmatched": 2}))
    (ws / "answer.txt").write_text("total 1400.07")
    return ws


@pytest.mark.sandbox  # author graders run in bubblewrap
def test_grader_reads_retained_intermediate_artifacts(tmp_path, workspace):
    skill = skill_with_graders(tmp_path, {"intermediate.py": INTERMEDIATE})
    graders = discover_author_graders(skill)
    assert [g.metric for g in graders] == ["author:intermediate"]
    r = run(graders, ctx(workspace, skill))["author:intermediate"]
    assert r.score == 1.0 and r.details["passed"] is True and r.details["details"] == {"unmatched": 2}
    assert r.grader == "author" and len(r.grader_version) == 12
    (workspace / "work" / "step1.json").write_text(json.dumps({"unmatched": 5}))
    low = run(graders, ctx(workspace, skill))["author:intermediate"]
    assert low.score == 0.25 and low.details["passed"] is False
    assert low.evidence[0].passed is False


@pytest.mark.sandbox  # author graders run in bubblewrap
def test_shell_grader_prints_a_float_and_sees_case_and_trajectory(tmp_path, workspace):
    traj = tmp_path / "trajectory.json"
    traj.write_text('{"schema_version": "ATIF-v1.2"}')
    skill = skill_with_graders(tmp_path, {"shape.sh": """
        grep -q explicit-1 "$ACES_CASE" || exit 3
        grep -q ATIF "$ACES_TRAJECTORY" || exit 4
        [ "$ACES_CONDITION" = with_skill ] || exit 5
        echo 0.75
        """})
    r = run(discover_author_graders(skill), ctx(workspace, skill, trajectory_path=traj))["author:shape"]
    assert r.score == 0.75, r.unscored_reason
    assert r.details["passed"] is None


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("import sys; print('boom', file=sys.stderr); sys.exit(3)", "exited with code 3: boom"),
        ("print('looks fine')", "not a number or a JSON object: 'looks fine'"),
        ("print('{\"score\": 1.5}')", "reply outside the contract: score: Input should be less than or equal to 1"),
        ("print('{\"details\": 1}')", "give 'score' (0..1) or 'passed' (true/false)"),
        ("pass", "printed nothing on stdout"),
    ],
)
def test_failures_leave_the_metric_unscored_with_the_cause(tmp_path, workspace, body, reason):
    skill = skill_with_graders(tmp_path, {"bad.py": body})
    r = run(discover_author_graders(skill), ctx(workspace, skill))["author:bad"]
    assert r.score is None and reason in r.unscored_reason


@pytest.mark.sandbox  # author graders run in bubblewrap
def test_timeout_kills_the_grader_and_is_unscored(tmp_path, workspace):
    skill = skill_with_graders(tmp_path, {"slow.sh": "sleep 30 & sleep 30\necho 1\n"})
    r = run(discover_author_graders(skill), ctx(workspace, skill), timeout_sec=0.5)["author:slow"]
    assert r.score is None and r.unscored_reason == "slow.sh timed out after 0.5s"
    assert r.details["duration_sec"] < 5


@pytest.mark.sandbox  # author graders run in bubblewrap
def test_grader_cannot_change_the_retained_workspace_and_gets_no_host_secrets(tmp_path, workspace, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret-should-not-leak-0000")
    skill = skill_with_graders(tmp_path, {"meddle.py": """
        import json, os, pathlib
        ws = pathlib.Path.cwd()
        try:
            (ws / "answer.txt").write_text("tampered")
        except OSError:
            pass  # a read-only mount inside the grader's sandbox
        print(json.dumps({"score": 1, "details": {"key": os.environ.get("OPENAI_API_KEY"),
                                                  "cwd_is_workspace": str(ws) == os.environ["ACES_WORKSPACE"]}}))
        """})
    r = run(discover_author_graders(skill), ctx(workspace, skill))["author:meddle"]
    assert r.details["details"] == {"key": None, "cwd_is_workspace": True}
    assert (workspace / "answer.txt").read_text() == "total 1400.07"


@pytest.mark.sandbox  # author graders run in bubblewrap
def test_no_retained_workspace_still_runs_and_says_so(tmp_path):
    skill = skill_with_graders(tmp_path, {"answer.py": """
        import os, pathlib
        print(1.0 if "1400.07" in pathlib.Path(os.environ["ACES_FINAL_ANSWER"]).read_text() else 0.0)
        """})
    r = run(discover_author_graders(skill), ctx(None, skill))["author:answer"]
    assert r.score == 1.0 and r.details["workspace_retained"] is False


def test_discovery_rules(tmp_path):
    skill = skill_with_graders(tmp_path, {"b.sh": "echo 1", "a.py": "print(1)", "_helper.py": "", "notes.md": "x"})
    assert [g.name for g in discover_author_graders(skill)] == ["a", "b"]
    assert discover_author_graders(None) == [] and discover_author_graders(tmp_path) == []
    (skill / "evals" / "graders" / "a.sh").write_text("echo 1")
    with pytest.raises(EvalsError, match="two author graders are named 'a'"):
        discover_author_graders(skill)


def test_parse_reply_accepts_logging_before_the_verdict():
    assert parse_reply("working...\n{\"passed\": true}\n").passed is True
    assert parse_reply("0.5").score == 0.5
    assert parse_reply('{\n  "score": 0.2\n}').score == 0.2
    assert parse_reply("true").passed is True
