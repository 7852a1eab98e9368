"""First-attempt grading: a check that only passed after the agent patched the skill failed on first attempt."""

from __future__ import annotations

from graders_fixtures import (
    RUN,
    SCRIPT,
    SKILL,
    SKILL_MD,
    bash,
    good_run,
    inp,
    tool,
    traj,
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
    assert first_attempt_pass(True, sc) is False
    assert first_attempt_pass(False, sc) is False
    assert first_attempt_pass(None, sc) is None


def test_clean_run_first_attempt_equals_final():
    results = grade_deterministic(inp(good_run()))
    sc = results["self_correction"]
    assert sc.details["self_correction"]["patched"] is False
    assert sc.details["self_correction"]["affected_checks"] == []
    assert sc.score == 1.0 and sc.sub_scores == {"activation": 1.0, "execution": 1.0, "workflow_order": 1.0}
    assert first_attempt_pass(True, sc) is True


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
                     allowed_skills=(SKILL,))
    sc = grade_deterministic(i)["self_correction"]
    assert sc.score is None and sc.unscored_reason.startswith("no case spec")
    assert sc.details["self_correction"]["patched"] is True
