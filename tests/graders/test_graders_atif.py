"""ATIF in: every version Harbor reads, subagents, continuations, stated causes, the synthetic adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.graders import RUN, SKILL_MD, bash, inp, traj_dict

from aces_bench.graders.atif import (
    SUPPORTED_VERSIONS,
    load_trajectory,
    load_trial_trajectory,
    parse_trajectory,
    resolve_trajectory,
    synthetic_from_log,
)
from aces_bench.graders.deterministic import grade_deterministic
from aces_bench.graders.tool_calls import build_view

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_harbor_version_loads_and_grades(tmp_path, version):
    assert len(SUPPORTED_VERSIONS) >= 9
    p = write(tmp_path / "trajectory.json", traj_dict(bash(f"cat {SKILL_MD}"), bash(RUN, "ok"), version=version))
    t, err = load_trajectory(p)
    assert err is None and t.schema_version == version
    r = grade_deterministic(inp(t))
    assert r["skill_execution"].score == 1.0


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        (None, "no trajectory file"),
        ("", "empty file"),
        ("{not json", "not valid JSON (Expecting property name enclosed in double quotes at line 1 column 2)"),
        ("[1, 2]", "an ATIF trajectory is a JSON object, got list"),
        (json.dumps({**traj_dict(bash("ls")), "schema_version": "ATIF-v9.0"}),
         "schema_version 'ATIF-v9.0' is not an ATIF version Harbor reads (accepted: ATIF-v1.0"),
        (json.dumps({"schema_version": "ATIF-v1.2", "agent": {"name": "a", "version": "1"}, "steps": []}),
         "not a valid ATIF trajectory: steps: List should have at least 1 item"),
        (json.dumps({**traj_dict(bash("ls")), "steps": [{"step_id": 2, "source": "user", "message": "x"}]}),
         "steps[0].step_id: expected 1"),
    ],
)
def test_bad_trajectories_give_a_stated_cause(tmp_path, content, cause):
    p = tmp_path / "agent" / "trajectory.json"
    if content is not None:
        write(p, content)
    t, err = load_trajectory(p)
    assert t is None and str(p) in err and cause in err
    r = grade_deterministic(inp(None, trajectory_error=err))
    assert all(m.score is None and cause in m.unscored_reason for m in r.values())


def test_embedded_subagent_calls_are_graded():
    parent = traj_dict(bash("ls /workspace/data", "march.csv"), version="ATIF-v1.7")
    sub = traj_dict(bash(f"cat {SKILL_MD}"), bash(RUN, "total: 1234.50"), version="ATIF-v1.7")
    sub["trajectory_id"] = "worker-1"
    parent["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [{"trajectory_id": "worker-1"}]
    t, err = parse_trajectory(parent)
    assert err is None
    t = t.model_copy(update={"subagent_trajectories": [parse_trajectory(sub)[0]]})
    view = build_view(t, "/workspace")
    assert [c.subagent for c in view.calls] == [None, "worker-1", "worker-1"]
    r = grade_deterministic(inp(t))["skill_execution"]
    assert r.sub_scores["activation"] == 1.0
    assert "subagent worker-1 step 2" in next(e for e in r.evidence if e.check == "activation").detail


def test_file_referenced_subagent_and_continuation_are_resolved(tmp_path):
    agent = tmp_path / "trial" / "agent"
    parent = traj_dict(bash("ls", "data"), version="ATIF-v1.7")
    parent["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [
        {"trajectory_id": "w", "trajectory_path": "trajectory.worker.json"}]
    parent["continued_trajectory_ref"] = "trajectory.cont-1.json"
    cont = traj_dict(bash(RUN, "ok"), version="ATIF-v1.7")
    cont["steps"][0]["is_copied_context"] = True
    write(agent / "trajectory.json", parent)
    write(agent / "trajectory.worker.json", traj_dict(bash(f"cat {SKILL_MD}"), version="ATIF-v1.7"))
    write(agent / "trajectory.cont-1.json", cont)
    loaded = load_trial_trajectory(tmp_path / "trial")
    assert loaded.error is None and loaded.notes == ()
    t = loaded.trajectory
    assert [s.step_id for s in t.steps] == list(range(1, len(t.steps) + 1))
    assert t.extra["aces_continuations"] == ["trajectory.cont-1.json"]
    assert [c.text for c in build_view(t, "/workspace").calls] == ["ls", f"cat {SKILL_MD}", RUN]


def test_broken_references_become_notes_not_failures(tmp_path):
    parent = traj_dict(bash("ls"), version="ATIF-v1.7")
    parent["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [{"trajectory_path": "missing.json"}]
    parent["continued_trajectory_ref"] = "trajectory.cont-1.json"
    loaded = resolve_trajectory(write(tmp_path / "trajectory.json", parent))
    assert loaded.trajectory is not None
    assert any("subagent not loaded" in n and "missing.json: no trajectory file" in n for n in loaded.notes)
    assert any("continuation not merged" in n for n in loaded.notes)


LOG = """Starting agent (plain log mode)
I will read the skill first.
root@sandbox:/workspace# cat /skills/invoice-reconciler/SKILL.md
---
name: invoice-reconciler
---
root@sandbox:/workspace# python3 /skills/invoice-reconciler/scripts/reconcile.py data/march.csv
Traceback (most recent call last):
exit code: 1
$ python3 /skills/invoice-reconciler/scripts/reconcile.py /workspace/data/march.csv
total: 1234.50
exit code: 0
"""


def test_plain_text_log_becomes_marked_synthetic_trajectory(tmp_path):
    t = synthetic_from_log(LOG, agent_name="mystery-agent", source="agent/mystery.txt")
    assert t.extra["aces_synthetic"] is True and t.notes.startswith("SYNTHETIC TRAJECTORY")
    view = build_view(t, "/workspace")
    assert view.synthetic
    assert [(c.tool, c.exit_code) for c in view.calls] == [("bash", None), ("bash", 1), ("bash", 0)]
    assert view.responses[0][1].startswith("Starting agent")
    r = grade_deterministic(inp(t))
    assert r["skill_execution"].sub_scores["execution"] == 1.0
    assert r["skill_execution"].sub_scores["error_recovery"] == 1.0
    assert all(m.details.get("synthetic_trajectory") is True for m in r.values())
    # Through the trial loader: no trajectory.json, a log in agent/.
    write(tmp_path / "trial" / "agent" / "mystery.txt", LOG)
    loaded = load_trial_trajectory(tmp_path / "trial")
    assert loaded.synthetic and loaded.trajectory.agent.name == "mystery"
    assert loaded.notes == ("synthetic trajectory from mystery.txt",)


def test_trial_without_trajectory_or_log(tmp_path):
    (tmp_path / "trial" / "agent").mkdir(parents=True)
    loaded = load_trial_trajectory(tmp_path / "trial")
    assert loaded.trajectory is None and "no trajectory.json and no plain-text agent log" in loaded.error


def test_text_without_commands_is_one_message():
    t = synthetic_from_log("The answer is 42.")
    assert len(t.steps) == 1 and build_view(t, "/workspace").calls == ()


@pytest.mark.shared
def test_real_skillsbench_trajectories_grade_without_error():
    trials = sorted((SHARED / "data" / "skillsbench" / "trials").glob("*/*/agent/trajectory.json"))
    if not trials:
        pytest.skip(f"../shared skillsbench trials are absent ({SHARED}): real-trajectory test needs them")
    from aces_bench.cases import EvalCase
    from aces_bench.graders.base import GradingInput

    for path in trials:
        loaded = resolve_trajectory(path)
        assert loaded.error is None, loaded.error
        cond = "with_skill" if path.parts[-4] == "skills" else "baseline"
        for case in (None, EvalCase.model_validate({"id": "c", "prompt": "p", "expected_skill": "mesh-analysis"})):
            i = GradingInput(trajectory=loaded.trajectory, case=case, condition=cond, target_skill="mesh-analysis",
                             allowed_skills=("mesh-analysis",), workdir="/root", skills_dir="/skills")
            results = grade_deterministic(i)
            assert results["security"].scored and results["skill_efficiency"].scored
            assert results["skill_execution"].scored == (case is not None)
    # gemini-cli activates through activate_skill, not by reading SKILL.md.
    t = resolve_trajectory(SHARED / "data/skillsbench/trials/skills/3d-scan-calc/agent/trajectory.json").trajectory
    case = EvalCase.model_validate({"id": "c", "prompt": "p", "expected_skill": "mesh-analysis"})
    r = grade_deterministic(GradingInput(trajectory=t, case=case, condition="with_skill", target_skill="mesh-analysis",
                                         allowed_skills=("mesh-analysis",), workdir="/root", skills_dir="/skills"))
    assert r["skill_execution"].sub_scores["activation"] == 1.0
    assert "activate_skill tool call" in r["skill_execution"].evidence[0].detail
    base = resolve_trajectory(SHARED / "data/skillsbench/trials/noskills/3d-scan-calc/agent/trajectory.json").trajectory
    rb = grade_deterministic(GradingInput(trajectory=base, case=case, condition="baseline", target_skill="mesh-analysis",
                                          allowed_skills=("mesh-analysis",), workdir="/root", skills_dir="/skills"))
    assert rb["skill_execution"].sub_scores["activation"] == 0.0


def test_the_report_reads_a_trajectory_through_the_graders_loader(tmp_path):
    # One continuation file: the page must show the steps that were graded, and a plain
    # log (no ATIF file) is synthesised for the page as for the graders.
    from aces_bench.analysis.pages import load_trajectory as report_load
    from aces_bench.analysis.trajectory_view import view

    agent = tmp_path / "trial" / "agent"
    parent = traj_dict(bash("ls", "data"), version="ATIF-v1.7")
    parent["continued_trajectory_ref"] = "trajectory.cont-1.json"
    write(agent / "trajectory.json", parent)
    write(agent / "trajectory.cont-1.json", traj_dict(bash(RUN, "ok"), version="ATIF-v1.7"))
    graded = load_trial_trajectory(tmp_path / "trial").trajectory
    shown, err = report_load(agent / "trajectory.json", tmp_path / "trial")
    assert err is None and len(shown.steps) == len(graded.steps) > len(parent["steps"])
    page = view(shown)
    assert [s.step_id for s in (*page.head, *page.folded, *page.tail)] == [s.step_id for s in graded.steps]
    plain = tmp_path / "plain" / "agent"
    plain.mkdir(parents=True)
    (plain / "terminus.log").write_text("$ ls\ndata\n$ cat data/a.csv\n1,2\n")
    shown, err = report_load(None, tmp_path / "plain")
    assert err is None and shown is not None and shown.steps
