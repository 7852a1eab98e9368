"""Negative-lift triage: each rule on its own, and the planted cases in their groups."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harbor.models.trajectories import Agent, Observation, ObservationResult, Step, ToolCall, Trajectory

from aces_bench.analysis.triage import MECHANISMS, activation, classify
from aces_bench.cases import EvalCase
from aces_bench.graders.skill_execution import analyse
from aces_bench.graders.tool_calls import build_view
from aces_bench.records.results import MetricResult
from aces_bench.records.trials import GradedTrial

GOLDEN_GRADE = Path(__file__).resolve().parents[1] / "golden" / "grades" / "grades_v1.jsonl"
DIRS = ("/workspace", "/skills")  # the trials' (workdir, skills dir): the settings' defaults


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
    # Without a grade the graders' own activation rule reads the trajectory.
    assert activation(None, _traj([("bash", {"command": "cat /skills/foo/SKILL.md"})]), "foo", DIRS) is True
    assert activation(None, _traj([("activate_skill", {"name": "foo"})]), "foo", DIRS) is True
    assert activation(None, _traj([("Skill", {"skill": "foo"})]), "foo", DIRS) is True
    assert activation(None, _traj([("read_file", {"path": "/skills/bar/SKILL.md"})]), "foo", DIRS) is False
    # A frontmatter peek is discovery, not activation (the graders' rule, which triage's own regex missed).
    peek = _traj([("bash", {"command": "head -4 /skills/foo/SKILL.md"})])
    peek.steps[1].observation = Observation(results=[ObservationResult(
        source_call_id="c2", content="---\nname: foo\ndescription: Sum a column.\n---")])
    assert activation(None, peek, "foo", DIRS) is False
    assert activation(None, None, "foo", DIRS) is None


def _graded(traj: Trajectory, *, negative: bool, stored: bool) -> GradedTrial:
    """A with-skill record graded by skill_execution; ``stored=False``: graded before ``activated`` existed."""
    case = EvalCase.model_validate({"id": "n", "prompt": "How many lines?", "kind": "negative" if negative else "explicit",
                                    "expected_skill": None if negative else "foo"})
    facts = analyse(build_view(traj, "/workspace").calls, case, "foo", "/skills", "with_skill")
    result = MetricResult(metric="skill_execution", score=facts.score, sub_scores=facts.sub_scores,
                          evidence=facts.evidence, grader="deterministic", grader_version="1")
    line = json.loads(GOLDEN_GRADE.read_text().splitlines()[0])
    line.update(negative_control=negative, condition="with_skill", metrics={"skill_execution": result.model_dump()})
    record = GradedTrial.model_validate(line)
    if stored:
        from aces_bench.graders.skill_execution import ACTIVATION, happened
        record = record.model_copy(update={"activated": happened(result, ACTIVATION, negative_control=negative)})
    return record


def test_a_negative_control_that_left_the_skill_alone_is_not_read_as_activated():
    # skill_execution scores a negative control 1 for NOT triggering the skill; reading that
    # sub-score as "activated" put correct negative controls under "misused".
    alone = _traj([("bash", {"command": "wc -l data.csv"})])
    triggered = _traj([("bash", {"command": "cat /skills/foo/SKILL.md"})])
    for stored in (True, False):
        assert activation(_graded(alone, negative=True, stored=stored), None, "foo", DIRS) is False
        assert activation(_graded(triggered, negative=True, stored=stored), None, "foo", DIRS) is True
        assert activation(_graded(triggered, negative=False, stored=stored), None, "foo", DIRS) is True
        assert activation(_graded(alone, negative=False, stored=stored), None, "foo", DIRS) is False
    ok = {"status_with": "ok", "status_base": "ok"}
    left_alone = activation(_graded(alone, negative=True, stored=True), None, "foo", DIRS)
    assert classify(ok, outcome="outcome", activated=left_alone, negative_control=True, sibling_lifts=[])[0] == "other"


def _groups(html: str) -> dict[str, str]:
    parts = re.split(r'<h2 id="(\w+)">', html)[1:]
    return dict(zip(parts[::2], parts[1::2], strict=True))


def test_planted_cases_land_in_their_groups_with_rules_on_the_page(report_dir):
    html = (report_dir / "triage.html").read_text()
    for m in MECHANISMS:
        assert m.rule.split(":")[0] in html
    groups = _groups(html)
    assert "invoice-reconciler" in groups["never_discovered"] and "implicit-1" in groups["never_discovered"]
    # Intention to treat (issue 22): a timed-out or errored arm is scored 0, so the planted
    # timeout and agent error are negative pairs resting on a run that did not finish.
    assert "semver-bump" in groups["arm_failed"] and "timeout / ok" in groups["arm_failed"]
    assert "access-log-latency" in groups["arm_failed"] and "agent_error / ok" in groups["arm_failed"]
    assert "access-log-latency" in groups["unstable"] and "contextual-1" in groups["unstable"]
    assert "semver-bump" in groups["misused"] and "activated, checks failed" in groups["misused"]
    # Each case links to its pair on the skill page.
    for href in re.findall(r'href="(skills/[^"#]+)#(pair-[0-9a-f]{12})"', html):
        page = (report_dir / href[0]).read_text()
        assert f'id="{href[1]}"' in page


def test_a_trajectory_is_read_in_its_own_studys_skills_dir(tmp_path):
    """The triage's fallback over the trajectory read every study as if its skills were in
    /skills: a study with workspace.skills_dir=/opt/skills read "never discovered" for a
    skill its agent read. The skills dir is now the study's own, from its provenance."""
    from aces_bench.config.compose import compose_spec
    from aces_bench.reports.records import StudyProvenance, workspace_dirs
    from aces_bench.study.provenance import build_provenance

    read = _traj([("bash", {"command": "cat /opt/skills/foo/SKILL.md"})])
    spec = compose_spec(["workspace.skills_dir=/opt/skills", "workspace.workdir=/app"], output_dir=tmp_path)
    provenance = StudyProvenance.model_validate(build_provenance(spec, []).model_dump(mode="json"))
    assert workspace_dirs(provenance) == ("/app", "/opt/skills")
    assert activation(None, read, "foo", workspace_dirs(provenance)) is True
    assert activation(None, read, "foo", DIRS) is False  # read where the study's skills were not
    assert workspace_dirs(None) == DIRS  # no provenance: the declared defaults
