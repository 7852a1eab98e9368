"""Findings 3 and 5: host-side reads of what a trial wrote never block and never explode.

A FIFO, a socket or a link wherever the host reads (trajectory, continuation, subagent,
plain log, answer, workspace files, verifier details) is skipped with its reason within
the test's timeout; every read is capped (16 MiB; the answer 1 MiB) and what was cut is
recorded on the trial and shown on its page; a report page shows a bounded excerpt. The
real trajectories of ../shared/data/skillsbench load exactly as before.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

import pytest
from harbor.models.trial.result import TrialResult
from support import grading as gs

from aces_bench.analysis.trajectory_view import EXCERPT_CHARS, MAX_STEPS_SHOWN, clip, view
from aces_bench.cases import EvalCase
from aces_bench.config.spec import GradingSpec
from aces_bench.graders.atif import load_trial_trajectory, parse_trajectory, resolve_trajectory
from aces_bench.graders.skill_execution import Provenance
from aces_bench.grading.grade import GradingContext, grade_subject
from aces_bench.grading.subject import TrialSubject
from aces_bench.inputs.trialfiles import MAX_TRIAL_FILE_BYTES, read_trial_file
from aces_bench.judges.heuristic import HeuristicJudge

pytestmark = [pytest.mark.timeout(60)]  # a read that blocks fails here instead of hanging the suite


def test_read_trial_file_skips_what_is_not_a_regular_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    os.symlink("/etc/passwd", tmp_path / "link")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    try:
        assert read_trial_file(tmp_path / "fifo").problem == "a named pipe (FIFO), not read"
        assert read_trial_file(tmp_path / "link").problem == "a symlink, not read"
        assert read_trial_file(tmp_path / "sock").problem == "a socket, not read"
        assert read_trial_file(Path("/dev/zero")).problem == "a device, not read"
        assert read_trial_file(tmp_path / "none").problem == "missing"
    finally:
        sock.close()
    (tmp_path / "big").write_bytes(b"x" * 1000)
    cut = read_trial_file(tmp_path / "big", limit=100)
    assert (len(cut.data), cut.size, cut.truncated) == (100, 1000, True)
    assert cut.note == "big: 1,000 bytes, only the first 100 read (host-side read cap)"


def _trial(tmp_path: Path, traj: dict | None, workspace: dict[str, str] | None = None) -> Path:
    return gs.write_trial(tmp_path / "job", "t__1", traj, gs.trial_result("aces/t", "t__1", 1.0), workspace=workspace)


def test_a_fifo_at_every_trajectory_path_is_a_stated_cause(tmp_path):
    d = _trial(tmp_path, None)
    os.mkfifo(d / "agent" / "trajectory.json")
    loaded = load_trial_trajectory(d)
    assert loaded.trajectory is None and loaded.error.endswith("trajectory.json: a named pipe (FIFO), not read")
    # Only a FIFO log beside no trajectory: nothing to read, said so.
    (d / "agent" / "trajectory.json").unlink()
    os.mkfifo(d / "agent" / "claude-code.txt")
    assert "no trajectory.json and no plain-text agent log" in load_trial_trajectory(d).error
    # A continuation and a subagent that are FIFOs, and references out of the agent folder.
    traj = gs.trajectory(gs.bash("ls", "a"))
    traj["continued_trajectory_ref"] = "part2.json"
    traj["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"] = [
        {"trajectory_id": "sub", "trajectory_path": "sub.json"},
        {"trajectory_id": "up", "trajectory_path": "../../../../../../etc/passwd"}]
    (d / "agent" / "trajectory.json").write_text(json.dumps(traj))
    os.mkfifo(d / "agent" / "part2.json")
    os.mkfifo(d / "agent" / "sub.json")
    loaded = resolve_trajectory(d / "agent" / "trajectory.json")
    assert loaded.trajectory is not None
    assert any("part2.json: a named pipe (FIFO), not read" in n for n in loaded.notes), loaded.notes
    assert any("sub.json: a named pipe (FIFO), not read" in n for n in loaded.notes), loaded.notes
    assert any("is outside the agent folder: not read" in n for n in loaded.notes), loaded.notes


def _subject(d: Path, case: EvalCase) -> TrialSubject:
    return TrialSubject.of(
        task_id="t", attempt=1, skill=gs.SKILL, case=case, case_id=case.id, condition="with_skill", status="ok",
        failure_cause=None, trial_name="t__1", trial_dir=d, result=TrialResult.model_validate(
            gs.trial_result("aces/t", "t__1", 1.0)), reward=1.0,
        target_skill=gs.SKILL, allowed_skills=(gs.SKILL,), artifacts_dir=d / "artifacts" / "workspace",
        labels={"run_id": "job", "harness": "h", "model": "m", "agent_label": "h", "judge_label": "x", "backend": "b"}, skills_dir="/skills", workdir="/workspace",
    )


CASE = EvalCase.model_validate({"id": "explicit-1", "prompt": "Reconcile data/march.csv.", "expected_skill": gs.SKILL,
                                "expected_script": gs.SCRIPT, "expected_output": "unmatched total 1400.07"})


def _grade(d: Path, case: EvalCase = CASE):
    return asyncio.run(grade_subject(_subject(d, case), GradingContext(grading=GradingSpec(mode="aces_default"),
                                                                       judge=HeuristicJudge())))


def test_grading_finishes_with_fifos_in_the_answer_and_the_workspace(tmp_path):
    traj = gs.trajectory(gs.bash(f"python3 /skills/{gs.SKILL}/{gs.SCRIPT} data/march.csv", "unmatched total 1400.07"),
                         gs.bash("cat /workspace/../../etc/hostname", ""), final="unmatched total 1400.07")
    d = _trial(tmp_path, traj, workspace={"notes.txt": "fine"})
    ws = d / "artifacts" / "workspace"
    os.mkfifo(ws / "answer.txt")
    os.mkfifo(ws / "pipe.log")
    os.symlink("/etc/passwd", ws / "passwd")
    graded = _grade(d)
    assert graded.final_answer == "unmatched total 1400.07"  # the trajectory's, the FIFO skipped
    assert graded.read_limits == ["answer.txt: a named pipe (FIFO), not read"]
    assert Provenance(workdir="/workspace", workspace=ws).retained_digest("/workspace/../../../etc/passwd") is None
    assert Provenance(workdir="/workspace", workspace=ws).retained_digest("/workspace/pipe.log") is None


def test_a_trajectory_past_the_cap_is_not_parsed_and_the_trial_says_so(tmp_path):
    flood = "y" * (MAX_TRIAL_FILE_BYTES + 10)
    d = _trial(tmp_path, gs.trajectory(gs.bash("yes", flood)))
    graded = _grade(d)
    assert graded.has_trajectory is False
    assert graded.trajectory_error.endswith(
        f"bytes, above the {MAX_TRIAL_FILE_BYTES:,}-byte host-side read cap; not parsed")
    assert graded.read_limits == [graded.trajectory_error]


def test_an_answer_past_its_cap_is_cut_and_recorded(tmp_path):
    d = _trial(tmp_path, gs.trajectory(gs.bash("ls", "")), workspace={"answer.txt": "unmatched total 1400.07\n" + "z" * 3_000_000})
    graded = _grade(d)
    assert graded.final_answer.startswith("unmatched total 1400.07") and len(graded.final_answer) == 1024 * 1024
    assert graded.read_limits == ["answer.txt: 3,000,024 bytes, only the first 1,048,576 read (host-side read cap)"]


def test_a_page_shows_a_bounded_excerpt_of_a_flood():
    huge = ("flood " * 2_000_000)  # 12 MB of output in one observation
    traj_data = gs.trajectory(*[gs.bash(f"echo {i}", huge if i == 3 else "ok") for i in range(3000)])
    traj, err = parse_trajectory(traj_data)
    assert err is None
    v = view(traj)
    rendered = v.model_dump_json()
    assert len(rendered) < 3_000_000, len(rendered)
    assert v.n_steps == 3002 and v.steps_omitted == 3002 - MAX_STEPS_SHOWN
    flooded = next(c for s in v.head for c in s.calls if c.output and c.output.omitted)
    assert len(flooded.output.head) + len(flooded.output.rest) <= EXCERPT_CHARS
    assert flooded.output.omitted >= len(huge) - EXCERPT_CHARS - 200
    # Cut before masking, at a space: a secret straddling the cut is not left half visible.
    secret = "sk-proj-" + "A1b2C3d4" * 6
    text = "x " * (EXCERPT_CHARS // 2 - 10) + secret + " tail"
    shown = clip(text)
    assert "A1b2C3d4" not in shown.head + shown.rest


@pytest.mark.shared
def test_real_skillsbench_trajectories_load_exactly_as_before(shared_dir):
    """The caps change nothing for real trials (16 trajectories of 5-93 kB)."""
    paths = sorted((shared_dir / "data" / "skillsbench" / "trials").glob("*/*/agent/trajectory.json"))
    assert len(paths) == 16
    for path in paths:
        before, err = parse_trajectory(path.read_bytes(), where=str(path))
        loaded = load_trial_trajectory(path.parent.parent)
        assert loaded.error == err
        assert loaded.trajectory == before
        assert read_trial_file(path).note is None
