"""skill_execution: each sub-check has a trajectory that must score high and one that must score low."""

from __future__ import annotations

from support.graders import (
    NEGATIVE,
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
)

from aces_bench.cases import EvalCase
from aces_bench.graders.skill_execution import grade_skill_execution
from aces_bench.graders.tool_calls import build_view


def grade(t, **kw):
    i = inp(t, **kw)
    return grade_skill_execution(i, build_view(t, "/workspace") if t is not None else None)


def ev(result, check):
    return [e for e in result.evidence if e.check == check]


def test_good_run_scores_full_with_evidence():
    r = grade(good_run())
    assert r.score == 1.0
    assert r.sub_scores == {"activation": 1.0, "execution": 1.0, "workflow_order": 1.0, "error_recovery": None}
    assert "activated at step 2" in ev(r, "activation")[0].detail
    assert ev(r, "execution")[0].step_id == 3 and "succeeded" in ev(r, "execution")[0].detail
    assert ev(r, "error_recovery")[0].passed is None
    assert "no call failed" in ev(r, "error_recovery")[0].detail


def test_activation_low_when_skill_never_read():
    r = grade(traj(bash("ls /workspace/data", "march.csv"), bash("python3 -c 'print(1)'", "1")))
    assert r.sub_scores["activation"] == 0.0
    assert r.sub_scores["execution"] == 0.0
    assert r.sub_scores["workflow_order"] is None
    assert "never invoked" in ev(r, "execution")[0].detail
    assert r.score == 0.0


def test_activation_by_harness_tools_and_copies():
    for call in (
        tool("activate_skill", {"name": SKILL}, "<activated_skill>...</activated_skill>"),
        tool("Skill", {"skill": SKILL}, "Launching skill"),
        tool("read_file", {"file_path": f"/root/.gemini/skills/{SKILL}/SKILL.md"}, "---\nname: x\n---\n# Steps"),
        tool("Read", {"file_path": f"~/.claude/skills/{SKILL}/SKILL.md"}, "..."),
        bash(f"cd ~/.agents/skills/{SKILL} && sed -n 1,40p SKILL.md", "..."),
        tool("str_replace_based_edit_tool", {"command": "view", "path": f"/runtime/skills/{SKILL}/SKILL.md"}),
    ):
        r = grade(traj(call), case_=case(expected_script=None))
        assert r.sub_scores["activation"] == 1.0, call
        assert r.sub_scores["execution"] is None
        assert ev(r, "execution")[0].detail == "not applicable: the case names no expected_script"


def test_reading_another_skill_is_not_activation():
    r = grade(traj(bash("cat /skills/other-skill/SKILL.md", "...")), case_=case(expected_script=None))
    assert r.sub_scores["activation"] == 0.0


def test_acceptable_skill_counts_as_activation():
    c = EvalCase.model_validate({"id": "c1", "prompt": "p", "expected_skill": SKILL, "acceptable_skills": ["alt"]})
    r = grade(traj(bash("cat /skills/alt/SKILL.md", "...")), case_=c)
    assert r.sub_scores["activation"] == 1.0


def test_execution_half_when_every_invocation_failed():
    r = grade(traj(bash(f"cat {SKILL_MD}", "..."), bash(RUN, "Traceback ...\nKeyError: 'amount'", 1)))
    assert r.sub_scores["execution"] == 0.5
    assert "every invocation failed" in ev(r, "execution")[0].detail


def test_execution_any_prefix_but_not_agent_authored_copy():
    ok = grade(traj(bash(f"cat {SKILL_MD}"), bash(f"cd /skills/{SKILL} && python {SCRIPT} /workspace/data/march.csv")))
    assert ok.sub_scores["execution"] == 1.0
    # The agent writes its own scripts/reconcile.py in the workspace: not the skill's script.
    own = grade(traj(
        tool("write_file", {"file_path": "/workspace/scripts/reconcile.py", "content": "print(1)"}, "ok"),
        bash("python3 scripts/reconcile.py", "1"),
    ))
    assert own.sub_scores["execution"] == 0.0


def test_script_of_another_skill_does_not_count():
    r = grade(traj(bash(f"cat {SKILL_MD}"), bash(f"python3 /skills/other/{SCRIPT}", "ok")))
    assert r.sub_scores["execution"] == 0.0


def test_workflow_order_low_when_script_runs_before_read():
    r = grade(traj(bash(RUN, "total: 1234.50"), bash(f"cat {SKILL_MD}", "...")))
    assert r.sub_scores["workflow_order"] == 0.0
    e = ev(r, "workflow_order")[0]
    assert e.passed is False and e.step_id == 2 and "before the skill was read" in e.detail


def test_error_recovery_high_after_sensible_fix():
    r = grade(traj(
        bash(f"cat {SKILL_MD}"),
        bash(f"python3 /skills/{SKILL}/{SCRIPT} march.csv", "FileNotFoundError: march.csv", 2),
        bash(RUN, "total: 1234.50"),
    ))
    assert r.sub_scores["error_recovery"] == 1.0
    e = ev(r, "error_recovery")[0]
    assert e.passed is True and e.step_id == 3 and "recovered by bash at step 4" in e.detail


def test_error_recovery_low_on_blind_repeat():
    r = grade(traj(bash(f"cat {SKILL_MD}"), bash(RUN, "KeyError", 1), bash(RUN, "KeyError", 1)))
    assert r.sub_scores["error_recovery"] == 0.0
    assert "repeated unchanged and failed again" in ev(r, "error_recovery")[0].detail


def test_error_recovery_low_when_agent_gives_up():
    r = grade(traj(bash(f"cat {SKILL_MD}"), bash(RUN, "KeyError", 1)))
    assert r.sub_scores["error_recovery"] == 0.0
    assert "no successful call followed" in ev(r, "error_recovery")[0].detail


def test_negative_control_high_when_skill_not_triggered():
    r = grade(traj(bash("wc -l data/notes.txt", "12")), case_=EvalCase.model_validate({**NEGATIVE, "prompt": "p"}))
    assert r.score == 1.0
    assert r.sub_scores == {"activation": 1.0, "execution": 1.0, "workflow_order": None, "error_recovery": None}
    assert "was not triggered" in ev(r, "activation")[0].detail


def test_negative_control_low_when_skill_triggered():
    r = grade(good_run(), case_=EvalCase.model_validate({**NEGATIVE, "prompt": "p"}))
    assert r.score == 0.0
    assert "negative control: skill 'invoice-reconciler' was triggered at step 2" in ev(r, "activation")[0].detail
    assert ev(r, "execution")[0].step_id == 3


def test_baseline_scored_with_same_functions():
    r = grade(traj(bash("python3 -c 'import csv'", "")), condition="baseline")
    assert r.sub_scores["activation"] == 0.0
    assert "baseline: the skill is absent by design" in ev(r, "activation")[0].detail


def test_unscored_without_case_or_trajectory():
    from aces_bench.graders.base import GradingInput

    i = GradingInput(trajectory=good_run(), case=None, condition="with_skill", target_skill=SKILL,
                     allowed_skills=(SKILL,), skills_dir="/skills", workdir="/workspace")
    r = grade_skill_execution(i, build_view(good_run(), "/workspace"))
    assert r.score is None and r.unscored_reason.startswith("no case spec")
    r2 = grade(None, trajectory_error="x/agent/trajectory.json: no trajectory file")
    assert r2.score is None and r2.unscored_reason == "no trajectory: x/agent/trajectory.json: no trajectory file"


PEEK = f"sed -n '1{{/^---$/!q;d;}};/^---$/q;p' {SKILL_MD}"
PEEK_OUT = "name: invoice-reconciler\ndescription: Reconcile a ledger against a bank export.\n[exit code: 0]"


def test_frontmatter_peek_is_discovery_not_activation():
    t = traj(bash("ls -1 /skills", "invoice-reconciler"), bash(PEEK, PEEK_OUT), bash("wc -l data/march.csv", "42"))
    r = grade(t)
    assert r.sub_scores["activation"] == 0.0
    assert "no activation" in ev(r, "activation")[0].detail
    # The same peek in a negative control is not a trigger either.
    neg = grade(t, case_=case(**NEGATIVE))
    assert neg.sub_scores["activation"] == 1.0


def test_reading_the_body_after_a_peek_is_activation():
    body = "---\nname: invoice-reconciler\n---\n# Invoice reconciler\n## Usage\npython3 scripts/reconcile.py"
    t = traj(bash(PEEK, PEEK_OUT), bash(f"cat {SKILL_MD}", body), bash(RUN, "total: 1234.50"))
    r = grade(t)
    assert r.sub_scores["activation"] == 1.0
    assert ev(r, "activation")[0].step_id == 3


def test_a_read_through_a_glob_activates_the_skills_its_output_shows():
    out = f"---\nname: {SKILL}\ndescription: d\n---\n# Steps\n---\nname: other-skill\n---\n"
    r = grade(traj(bash("cat /skills/*/SKILL.md", out)), case_=case(expected_script=None))
    assert r.sub_scores["activation"] == 1.0
    assert "(glob)" in ev(r, "activation")[0].detail
    # The same glob in an arm where the target is absent: its output names other skills only.
    r = grade(traj(bash("cat /skills/*/SKILL.md", "---\nname: other-skill\n---\n")), case_=case(expected_script=None))
    assert r.sub_scores["activation"] == 0.0


def test_keystrokes_naming_the_absent_targets_script_in_the_baseline_ran_nothing():
    # terminus-2 keystrokes carry no exit status; in the baseline the target's folder is not staged.
    keys = tool("bash", {"keystrokes": f"python3 /skills/{SKILL}/{SCRIPT} data/march.csv\n"}, "$ ")
    r = grade(traj(keys), condition="baseline")
    assert r.sub_scores["execution"] == 0.0 and "never invoked" in ev(r, "execution")[0].detail
    # Without an exit status, a failure printed in the output is a failed run, not a clean one.
    crash = tool("bash", {"keystrokes": f"python3 /skills/{SKILL}/{SCRIPT}\n"},
                 "Traceback (most recent call last):\n  boom")
    assert grade(traj(crash)).sub_scores["execution"] == 0.5
