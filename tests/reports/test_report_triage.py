"""Negative-lift triage: each rule on its own, and the planted cases in their groups."""

from __future__ import annotations

import re

from harbor.models.trajectories import Agent, Step, ToolCall, Trajectory

from aces_bench.reports.triage import MECHANISMS, activation_from_trajectory, classify


def test_rules_apply_in_order():
    ok = {"status_with": "ok", "status_base": "ok"}
    assert classify({"status_with": "timeout", "status_base": "ok"}, outcome="composite", activated=False,
                    negative_control=False, sibling_lifts=[0.5])[0] == "arm_failed"
    assert classify(ok, outcome="composite", activated=False, negative_control=False, sibling_lifts=[0.5])[0] == "never_discovered"
    assert classify(ok, outcome="composite", activated=True, negative_control=False, sibling_lifts=[-0.1, 0.0])[0] == "unstable"
    assert classify(ok, outcome="composite", activated=True, negative_control=False, sibling_lifts=[-0.2])[0] == "misused"
    assert classify(ok, outcome="composite", activated=None, negative_control=False, sibling_lifts=[])[0] == "other"
    # A negative control that left the skill alone was right to: not "never discovered".
    assert classify(ok, outcome="composite", activated=False, negative_control=True, sibling_lifts=[])[0] == "other"
    assert classify(ok, outcome="composite", activated=True, negative_control=True, sibling_lifts=[])[0] == "misused"


def _traj(calls: list[tuple[str, dict]]) -> Trajectory:
    steps = [Step(step_id=1, source="user", message="go")]
    for i, (fn, args) in enumerate(calls, start=2):
        steps.append(Step(step_id=i, source="agent", message="", tool_calls=[ToolCall(tool_call_id=f"c{i}", function_name=fn, arguments=args)]))
    return Trajectory(agent=Agent(name="a", version="1"), steps=steps)


def test_activation_is_recognised_across_harness_styles():
    assert activation_from_trajectory(_traj([("bash", {"command": "cat /skills/foo/SKILL.md"})]), "foo") is True
    assert activation_from_trajectory(_traj([("activate_skill", {"name": "foo"})]), "foo") is True
    assert activation_from_trajectory(_traj([("Skill", {"skill": "foo"})]), "foo") is True
    assert activation_from_trajectory(_traj([("read_file", {"path": "/skills/bar/SKILL.md"})]), "foo") is False
    assert activation_from_trajectory(None, "foo") is None


def _groups(html: str) -> dict[str, str]:
    parts = re.split(r'<h2 id="(\w+)">', html)[1:]
    return dict(zip(parts[::2], parts[1::2], strict=True))


def test_planted_cases_land_in_their_groups_with_rules_on_the_page(report_dir):
    html = (report_dir / "triage.html").read_text()
    for m in MECHANISMS:
        assert m.rule.split(":")[0] in html
    groups = _groups(html)
    assert "invoice-reconciler" in groups["never_discovered"] and "implicit-1" in groups["never_discovered"]
    # A timed-out arm has no task outcome (excluded from the lift), so under the default outcome no
    # negative pair rests on an unfinished run; the rule itself is tested on classify() above.
    assert "No case." in groups["arm_failed"]
    assert "access-log-latency" in groups["unstable"] and "contextual-1" in groups["unstable"]
    assert "semver-bump" in groups["misused"] and "activated, checks failed" in groups["misused"]
    # Each case links to its pair on the skill page.
    for href in re.findall(r'href="(skills/[^"#]+)#(pair-[0-9a-f]{12})"', html):
        page = (report_dir / href[0]).read_text()
        assert f'id="{href[1]}"' in page
