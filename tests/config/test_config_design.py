"""study=aces_paper: the paper's design as one experiment, expanded into its members."""

from __future__ import annotations

import json

from aces_bench.config.compose import compose_spec
from aces_bench.study.design import expand, member_spec, size_of

PRIMARY = {"claude-code", "codex", "opencode", "terminus-2"}


def _cells(members):
    out = []
    for m in members:
        kv = dict(o.split("=", 1) for o in m.overrides)
        out.append((m, kv))
    return out


def test_the_paper_design_has_every_arm_and_cell(tmp_path):
    spec = compose_spec(["study=aces_paper"], output_dir=tmp_path)
    assert spec.study.n_attempts == 3 and spec.study.scan_tiers == [1, 2]
    cells = _cells(expand(spec))
    # The headline arm is each harness in isolation; the group workspace is an arm of its own.
    primary = {(kv["harness"], kv["workspace"]) for m, kv in cells if "primary" in m.arms}
    assert primary == {(h, "isolation") for h in PRIMARY}
    group = {(kv["harness"], kv["workspace"], kv["decoys"]) for m, kv in cells if "group" in m.arms}
    assert group == {(h, "group", "paper") for h in PRIMARY}
    assert [m.arms[0] for m, _ in cells][:8] == ["primary"] * 4 + ["group"] * 4
    stress = {(kv["harness"], kv["decoys.size"]) for m, kv in cells if "routing_stress" in m.arms}
    assert {s for _, s in stress} == {"1", "5", "10", "20", "50"} and len(stress) == 10
    assert all(kv["workspace"] == "group" and kv["decoys"] == "pool" for m, kv in cells if "routing_stress" in m.arms)
    slice_ = [(m, kv) for m, kv in cells if "model_slice" in m.arms]
    assert {kv["harness"] for _, kv in slice_} == {"terminus-2"} and {kv["model"] for _, kv in slice_} == {
        "gpt-4o", "claude-sonnet"}
    # The slice's default-model cell is the primary terminus-2 isolation cell: one member, two arms.
    shared = [m for m, _ in slice_ if "primary" in m.arms]
    assert len(shared) == 1
    assert len(cells) == 8 + 10 + 1
    names = [m.name for m, _ in cells]
    assert len(set(names)) == len(names) and all("/" not in n for n in names)


def test_each_member_composes_with_its_harness_model(tmp_path):
    spec = compose_spec(["study=aces_paper"], output_dir=tmp_path)
    by_harness = {}
    for m in expand(spec)[:8]:
        ms = member_spec(spec, m, tmp_path)
        assert ms.study.arms == [] and ms.output_dir == tmp_path / m.name and ms.study.n_attempts == 3
        by_harness[ms.harness.name] = ms.model.name
    assert by_harness["claude-code"].startswith("anthropic/") and by_harness["codex"].startswith("openai/")


def test_one_override_points_the_design_at_other_skills_and_shrinks_an_arm(tmp_path):
    spec = compose_spec(["study=aces_paper", "skill.paths=[tests/fixtures/skills]",
                         "study.axes.harnesses=[reference,terminus-2]", "study.axes.stress_sizes=[1,5]"],
                        output_dir=tmp_path)
    members = expand(spec)
    ms = member_spec(spec, members[0], tmp_path)
    assert [str(p) for p in ms.skill.paths] == ["tests/fixtures/skills"]
    primary = {dict(o.split("=", 1) for o in m.overrides)["harness"] for m in members if "primary" in m.arms}
    assert primary == {"reference", "terminus-2"}
    assert sum("routing_stress" in m.arms for m in members) == 2 * 2


def test_size_and_cost_are_counted_from_the_members(tmp_path):
    spec = compose_spec(["study=aces_paper"], output_dir=tmp_path)
    members = expand(spec)[:3]
    done = [(m, member_spec(spec, m, tmp_path), 32) for m in members]
    size = size_of(spec, done)
    assert size.n_members == 3 and size.n_tasks == 96 and size.n_trials == 96 * 3
    assert size.cost_usd is not None and size.cost_usd > 0  # litellm's bundled prices know these models
    assert size.lines()[0].startswith("aces_paper: 3 members, 96 task dirs, 288 trials")
    json.loads(size.model_dump_json())
