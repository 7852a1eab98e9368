"""skill_efficiency: routing and tool efficiency, high and low, with the named waste indicators."""

from __future__ import annotations

import pytest
from support.graders import NEGATIVE, SKILL, SKILL_MD, bash, good_run, inp, tool, traj

from aces_bench.cases import EvalCase
from aces_bench.graders.skill_efficiency import grade_skill_efficiency
from aces_bench.graders.tool_calls import build_view


def eff(t, **kw):
    return grade_skill_efficiency(inp(t, **kw), build_view(t, "/workspace"))


def test_good_run_is_fully_efficient():
    r = eff(good_run())
    assert r.sub_scores == {"routing": 1.0, "tool_efficiency": 1.0}
    assert r.score == 1.0
    assert r.details["skills_read"] == [SKILL]
    assert any(e.check == "routing" and e.passed and "allowed" in e.detail for e in r.evidence)


def test_routing_low_when_decoy_read():
    t = traj(bash("cat /skills/pdf-filler/SKILL.md"), bash(f"cat {SKILL_MD}"), bash("cat /skills/csv-tools/SKILL.md"))
    r = eff(t)
    assert r.sub_scores["routing"] == pytest.approx(1 / 3, abs=1e-6)
    bad = [e for e in r.evidence if e.check == "routing" and e.passed is False]
    assert {e.detail.split("'")[1] for e in bad} == {"pdf-filler", "csv-tools"}


def test_routing_group_mode_allows_support_skill():
    t = traj(bash("cat /skills/csv-tools/SKILL.md"), bash(f"cat {SKILL_MD}"))
    assert eff(t, allowed=(SKILL, "csv-tools")).sub_scores["routing"] == 1.0


def test_listing_skills_dir_is_not_reading():
    assert eff(traj(bash("ls /skills", "csv-tools\ninvoice-reconciler"))).details["skills_read"] == []


def test_negative_control_reading_target_is_a_routing_error():
    neg = EvalCase.model_validate({**NEGATIVE, "prompt": "p"})
    r = eff(traj(bash(f"cat {SKILL_MD}")), case_=neg)
    assert r.sub_scores["routing"] == 0.0
    assert eff(traj(bash("wc -l notes.txt", "3")), case_=neg).sub_scores["routing"] == 1.0


@pytest.mark.parametrize(
    ("call", "indicator"),
    [
        (bash(f"python3 /skills/{SKILL}/scripts/reconcile.py --help", "usage: ..."), "help_fishing"),
        (bash("man awk", "AWK(1)"), "help_fishing"),
        (bash("ls /workspace/input", "ls: cannot access '/workspace/input': No such file or directory", 2),
         "wrong_path"),
        (tool("list_directory", {"dir_path": "/data"}, "Error: Directory not found: /data"), "wrong_path"),
        (bash("pip install pandas", "Successfully installed pandas-2.2.0"), "package_install"),
        (bash("sudo apt-get install -y jq", "Setting up jq"), "package_install"),
        (bash("npm install csv-parse", "added 1 package"), "package_install"),
    ],
)
def test_waste_indicators_lower_tool_efficiency(call, indicator):
    t = traj(bash(f"cat {SKILL_MD}", "..."), call, bash("echo 1 > /workspace/answer.txt"))
    r = eff(t)
    assert r.sub_scores["tool_efficiency"] == pytest.approx(2 / 3, abs=1e-6)
    assert r.details["waste"][indicator] == 1
    e = next(e for e in r.evidence if e.check == f"tool_efficiency.{indicator}")
    assert e.passed is False and e.step_id == 3 and "1 call(s)" in e.detail


def test_duplicate_read_is_waste_but_reread_after_change_is_not():
    dup = eff(traj(bash("cat answer.txt", "1"), bash("cat answer.txt", "1")))
    assert dup.details["waste"]["duplicate_call"] == 1 and dup.sub_scores["tool_efficiency"] == 0.5
    changed = eff(traj(bash("cat answer.txt", "1"), bash("echo 2 > answer.txt"), bash("cat answer.txt", "2")))
    assert changed.details["waste"]["duplicate_call"] == 0


def test_lots_of_waste_scores_low():
    t = traj(bash("python3 x.py -h", "usage"), bash("pip install x"), bash("ls /nope", "No such file or directory", 2),
             bash("pip3 install y"), bash("cat a", "a"), bash("cat a", "a"))
    r = eff(t)
    assert r.sub_scores["tool_efficiency"] == pytest.approx(1 / 6, abs=1e-6)
    assert r.score < 0.6


def test_control_calls_do_not_count_and_no_calls_is_not_applicable():
    t = traj(tool("mark_task_complete", {}))
    r = eff(t)
    assert r.sub_scores["tool_efficiency"] is None
    assert any(e.detail == "not applicable: no tool calls" for e in r.evidence)
    assert r.score == 1.0  # routing alone: no skill read


def test_unscored_without_trajectory():
    r = grade_skill_efficiency(inp(None, trajectory_error="gone"), None)
    assert r.score is None and r.unscored_reason == "no trajectory: gone"


def test_frontmatter_peek_of_a_disallowed_skill_is_not_a_routing_error():
    from support.graders import bash, inp, traj

    from aces_bench.graders.skill_efficiency import grade_skill_efficiency
    from aces_bench.graders.tool_calls import build_view

    peek = "sed -n '1,/^---$/p' /skills/log-triage/SKILL.md"
    t = traj(bash(peek, "---\nname: log-triage\ndescription: Group error lines by signature.\n---"))
    r = grade_skill_efficiency(inp(t), build_view(t, "/workspace"))
    assert r.sub_scores["routing"] == 1.0
    t2 = traj(bash("cat /skills/log-triage/SKILL.md", "---\nname: log-triage\n---\n# Log triage\nSteps..."))
    r2 = grade_skill_efficiency(inp(t2), build_view(t2, "/workspace"))
    assert r2.sub_scores["routing"] == 0.0
