"""First-attempt grading: a check that only passed after the agent patched the skill failed on first attempt."""

from __future__ import annotations

from support.graders import (
    RUN,
    SCRIPT,
    SKILL,
    SKILL_MD,
    bash,
    case,
    good_run,
    inp,
    tool,
    traj,
    traj_dict,
)

from aces_bench.graders.base import GradingInput
from aces_bench.graders.deterministic import grade_deterministic
from aces_bench.graders.self_correction import first_attempt_pass


def patched_run():
    """First script call fails, the agent edits the skill's script, the second call succeeds."""
    return traj(
        bash(f"cat {SKILL_MD}", "Run scripts/reconcile.py"),
        bash(RUN, "Traceback (most recent call last):\nKeyError: 'Amount'", 1),
        bash(f"sed -i 's/Amount/amount/' /skills/{SKILL}/{SCRIPT}", ""),
        bash(RUN, "total: 1234.50"),
        bash("echo 1234.50 > /workspace/answer.txt"),
        final="The total is 1234.50.",
    )


def test_self_correction_scenario_final_pass_first_attempt_fail():
    results = grade_deterministic(inp(patched_run(), final_answer="1234.50"))
    final, sc = results["skill_execution"], results["self_correction"]
    assert final.sub_scores["execution"] == 1.0 and final.sub_scores["error_recovery"] == 1.0
    assert sc.sub_scores["execution"] == 0.5  # on first attempt the script only failed
    assert sc.score < final.score
    section = sc.details["self_correction"]
    assert section["patched"] is True and section["first_patch_step"] == 4
    assert section["affected_checks"] == ["execution"]
    assert section["first_attempt"]["execution"] == 0.5 and section["final"]["execution"] == 1.0
    assert [c["path"] for c in section["changes"]] == [f"/skills/{SKILL}/{SCRIPT}"]
    assert section["changes"][0]["target"] is True
    assert [e["step_id"] for e in section["first_attempt_errors"]] == [3]
    assert section["first_attempt_errors"][0]["exit_code"] == 1
    assert [(r["step_id"], r["of_step"], r["succeeded"]) for r in section["retries"]] == [(5, 3, True)]
    checks = {e.check for e in sc.evidence}
    assert {"self_correction.change", "self_correction.first_attempt_error", "self_correction.retry"} <= checks
    summary = next(e for e in sc.evidence if e.check == "self_correction")
    assert summary.passed is False and "only passed after it: execution" in summary.detail
    # The verifier said pass; on first attempt it counts as a failure.
    assert first_attempt_pass(True, sc, pass_threshold=1.0) is False
    assert first_attempt_pass(False, sc, pass_threshold=1.0) is False
    assert first_attempt_pass(None, sc, pass_threshold=1.0) is None


def test_clean_run_first_attempt_equals_final():
    results = grade_deterministic(inp(good_run()))
    sc = results["self_correction"]
    assert sc.details["self_correction"]["patched"] is False
    assert sc.details["self_correction"]["affected_checks"] == []
    assert sc.score == 1.0 and sc.sub_scores == {"activation": 1.0, "execution": 1.0, "workflow_order": 1.0}
    assert first_attempt_pass(True, sc, pass_threshold=1.0) is True


def test_script_that_first_ran_after_patch_counts_as_failed():
    t = traj(
        bash(f"cat {SKILL_MD}"),
        tool("write_file", {"file_path": f"/skills/{SKILL}/config.yaml", "content": "delimiter: ';'"}, "ok"),
        bash(RUN, "total: 1234.50"),
    )
    sc = grade_deterministic(inp(t))["self_correction"]
    assert sc.sub_scores["execution"] == 0.0
    assert sc.details["self_correction"]["affected_checks"] == ["execution", "workflow_order"]


def test_harness_skill_config_edit_is_a_change():
    t = traj(bash(f"cat {SKILL_MD}"), bash("echo '{}' > ~/.claude/settings.json"), bash(RUN, "ok"))
    section = grade_deterministic(inp(t))["self_correction"].details["self_correction"]
    assert section["patched"] is True and section["changes"][0]["skill"] is None


def test_edit_of_other_skill_recorded_but_not_a_patch():
    t = traj(bash(f"cat {SKILL_MD}"), bash("touch /skills/csv-tools/NOTES.md"), bash(RUN, "ok"))
    sc = grade_deterministic(inp(t))["self_correction"]
    section = sc.details["self_correction"]
    assert section["patched"] is False and section["changes"][0]["target"] is False
    assert sc.score == 1.0


def test_section_recorded_without_case():
    i = GradingInput(trajectory=patched_run(), case=None, condition="with_skill", target_skill=SKILL,
                     allowed_skills=(SKILL,), skills_dir="/skills", workdir="/workspace")
    sc = grade_deterministic(i)["self_correction"]
    assert sc.score is None and sc.unscored_reason.startswith("no case spec")
    assert sc.details["self_correction"]["patched"] is True


# --- AEVAL: the first answer is graded; any later change to it or the outputs is self-correction ---------

ANSWER = "/workspace/answer.txt"
WRONG, RIGHT = "Total: 999.00 EUR", "Total: 65.00 EUR"
TOTAL = case(assertions=[{"kind": "number", "value": 65.0, "tolerance": 0.001}, {"kind": "contains", "value": "EUR"}])


def _first(t, *, final_pass: bool = True, case_=TOTAL, **kw):
    sc = grade_deterministic(inp(t, case_=case_, **kw))["self_correction"]
    return first_attempt_pass(final_pass, sc, pass_threshold=1.0), sc.details["self_correction"]


# The ways the harnesses write a file, first the wrong total and then the right one.
WRONG_THEN_RIGHT = {
    "shell echo": (bash(f"echo '{WRONG}' > {ANSWER}"), bash(f"echo '{RIGHT}' > {ANSWER}")),
    "shell printf and tee": (bash(f"printf '%s\\n' '{WRONG}' > {ANSWER}"), bash(f"echo '{RIGHT}' | tee {ANSWER}")),
    "heredoc": (bash(f"cat > {ANSWER} <<'EOF'\n{WRONG}\nEOF"), bash(f"cat > answer.txt <<EOF\n{RIGHT}\nEOF")),
    "python -c": (bash(f"python3 -c \"open('{ANSWER}', 'w').write('{WRONG}')\""),
                  bash(f"python3 -c \"from pathlib import Path; Path('answer.txt').write_text('{RIGHT}')\"")),
    "claude-code Write, Edit": (tool("Write", {"file_path": ANSWER, "content": WRONG}),
                                tool("Edit", {"file_path": ANSWER, "old_string": "999.00", "new_string": "65.00"})),
    "opencode write, edit": (tool("write", {"filePath": ANSWER, "content": WRONG}),
                             tool("edit", {"filePath": ANSWER, "oldString": "999", "newString": "65"})),
    "gemini-cli write_file, replace": (tool("write_file", {"file_path": ANSWER, "content": WRONG}),
                                       tool("replace", {"file_path": ANSWER, "old_string": WRONG, "new_string": RIGHT})),
    "editor tool create, str_replace": (
        tool("str_replace_based_edit_tool", {"command": "create", "path": ANSWER, "file_text": WRONG}),
        tool("str_replace_based_edit_tool", {"command": "str_replace", "path": ANSWER, "old_str": "999.00",
                                             "new_str": "65.00"})),
    "codex apply_patch": (
        tool("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {ANSWER}\n+{WRONG}\n*** End Patch"}),
        tool("apply_patch", {"input": f"*** Begin Patch\n*** Update File: {ANSWER}\n@@\n-{WRONG}\n+{RIGHT}\n"
                                      "*** End Patch"})),
}


def test_wrong_then_right_answer_fails_the_first_attempt_in_every_write_style():
    for style, (wrong, right) in WRONG_THEN_RIGHT.items():
        first, section = _first(traj(wrong, bash("cat data/march.csv", "id,amount"), right))
        assert first is False, (style, section)
        assert section["self_corrected"] is True and section["first_answer"]["content_known"], style
        assert section["first_answer"]["step_id"] == 2 and section["later_changes"][0]["step_id"] == 4, style
        assert section["first_attempt_reward"] == 0.0, style
        failed = [r for r in section["first_attempt_checks"] if not r["passed"]]
        assert [r["check"]["kind"] for r in failed] == ["number"], style


def test_right_then_wrong_passes_the_first_attempt_whatever_the_final_says():
    first, section = _first(traj(bash(f"echo '{RIGHT}' > {ANSWER}"), bash(f"echo '{WRONG}' > {ANSWER}")),
                            final_pass=False)
    assert first is True and section["self_corrected"] is True


def test_one_answer_or_the_same_text_again_is_no_self_correction():
    for calls in ((bash(f"echo '{RIGHT}' > {ANSWER}"),),
                  (bash(f"echo '{RIGHT}' > {ANSWER}"), tool("Write", {"file_path": ANSWER, "content": RIGHT + "\n"}))):
        first, section = _first(traj(*calls))
        assert first is True and section["self_corrected"] is False and section["later_changes"] == []


def test_an_answer_whose_text_is_not_in_the_trace_is_unknown_not_guessed():
    # A program's output redirected into the file, twice: the first text is not in the trajectory.
    run = "python3 /workspace/calc.py > /workspace/answer.txt"
    first, section = _first(traj(bash(run), bash("sed -i 's/a/b/' /workspace/calc.py"), bash(run)))
    assert first is None and section["self_corrected"] is True
    assert section["first_attempt_unknown"] == ("answer.txt's text at the first answer is not in the trace "
                                                "(written by bash command)")
    # ... unless the agent showed it: a cat of the file before rewriting it.
    first, _ = _first(traj(bash(run), bash(f"cat {ANSWER}", f"{WRONG}\n"), bash(run)))
    assert first is False


def test_a_changed_workspace_output_is_self_correction_and_its_first_text_is_checked():
    report = case(assertions=[{"kind": "contains", "value": "65.00", "file": "report.md"}])
    calls = (tool("Write", {"file_path": "/workspace/report.md", "content": "total 999.00"}),
             bash(f"echo done > {ANSWER}"),
             tool("Edit", {"file_path": "/workspace/report.md", "old_string": "999.00", "new_string": "65.00"}))
    first, section = _first(traj(*calls), case_=report)
    assert first is False
    assert [c["path"] for c in section["later_changes"]] == ["/workspace/report.md"]
    # A scratch file written and deleted after the answer is not a change to an output.
    first, section = _first(traj(bash(f"echo '{RIGHT}' > {ANSWER}"), bash("echo x > /tmp/t && rm /workspace/notes.txt")))
    assert first is True and section["self_corrected"] is False


def test_a_skill_patched_before_the_first_answer_fails_it_and_after_it_is_self_correction():
    patch = bash(f"sed -i 's/Amount/amount/' /skills/{SKILL}/{SCRIPT}", "")
    first, section = _first(traj(patch, bash(f"echo '{RIGHT}' > {ANSWER}")))
    assert first is False and section["patched_before_first_answer"] is True
    first, section = _first(traj(bash(f"echo '{RIGHT}' > {ANSWER}"), patch))
    assert first is True and section["self_corrected"] is True and not section["patched_before_first_answer"]


def test_without_an_answer_file_the_first_final_message_is_the_first_answer():
    from harbor.models.trajectories import Trajectory

    d = traj_dict(bash("cat data/march.csv", "id,amount"), final=WRONG)
    n = len(d["steps"])
    d["steps"] += [{"step_id": n + 1, "source": "user", "message": "Are you sure?"},
                   {"step_id": n + 2, "source": "agent", "message": RIGHT}]
    first, section = _first(Trajectory.model_validate(d))
    assert section["first_answer"]["source"] == "final_message" and first is False
    assert section["later_changes"][0]["how"] == "a later final message"


def test_a_written_check_on_a_folder_is_unknown_at_the_first_answer_not_failed(tmp_path):
    """What a folder held at the first answer is not in the trace: its 'written' check is unknown, never a
    failed first attempt read from a folder no file reader can open."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "r.json").write_text('{"rows": 8}')
    folder = case(assertions=[{"kind": "written", "value": "*", "file": "out"}])
    first, section = _first(traj(bash(f"echo '{RIGHT}' > {ANSWER}")), case_=folder, artifacts_dir=tmp_path)
    assert "out is a folder" in section["first_attempt_unknown"] and section["first_attempt_reward"] is None
    assert first is True  # nothing changed after the first answer: it is the final one
