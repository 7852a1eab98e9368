"""Support-skill roles, bundle and plugin interventions, seeded decoy draws."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import ConfigError, SkillError
from aces_bench.emitters import emit_study
from aces_bench.emitters.emit import read_task_metadata
from aces_bench.emitters.plan import plan_study, select_decoys
from aces_bench.inputs.skills import load_skill

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SKILL = FIXTURES / "skills" / "csv-column-sum"
DECOY = FIXTURES / "decoys" / "text-stats"
POOL = "decoys=pool"


def _staged(task) -> list[str]:
    return sorted(p.name for p in (task.path / "environment" / "skills").iterdir())


def _skill(root: Path, name: str, *, evals: bool = True) -> Path:
    """A copy of the fixture skill renamed ``name`` (cases renamed per skill)."""
    dest = root / name
    shutil.copytree(SKILL, dest)
    md = dest / "SKILL.md"
    md.write_text(md.read_text().replace("name: csv-column-sum", f"name: {name}"))
    data = json.loads((dest / "evals" / "evals.json").read_text())
    data["skill_name"] = name
    for case in data["evals"]:
        case["id"] = f"{name}-{case['id']}"
        if case.get("expected_skill", "x") is not None:
            case["expected_skill"] = name
    (dest / "evals" / "evals.json").write_text(json.dumps(data))
    if not evals:
        shutil.rmtree(dest / "evals")
    return dest


def test_support_roles_are_staged_in_both_conditions_and_recorded(tmp_path):
    helper = _skill(tmp_path / "support", "helper-tool", evals=False)
    reference = _skill(tmp_path / "support", "style-guide", evals=False)
    spec = compose_spec(["skill=custom", f"skill.paths=[{SKILL}]",
                         f"skill.support=[{helper},{{path:{reference},role:reference}},{{path:{DECOY},role:decoy}}]"],
                        output_dir=tmp_path)
    result = emit_study(spec, tmp_path / "tasks")
    for t in result.tasks:
        meta = read_task_metadata(t.path)
        roles = {s["name"]: s["role"] for s in meta["staged_skills"]}
        support = {"helper-tool": "helper", "style-guide": "reference", "text-stats": "decoy"}
        expected = {**support, "csv-column-sum": "target"} if t.condition == "with_skill" else support
        assert roles == expected
        assert _staged(t) == sorted(expected)
        # Helpers and references may be read freely; a decoy may not.
        allowed = set(meta["allowed_skills"])
        assert {"helper-tool", "style-guide"} <= allowed and "text-stats" not in allowed
        assert all(s["content_hash"] and len(s["content_hash"]) == 64 for s in meta["staged_skills"])


def test_a_support_skill_given_two_roles_is_refused(tmp_path):
    spec = compose_spec(["skill=custom", f"skill.paths=[{SKILL}]",
                         f"skill.support=[{{path:{DECOY},role:helper}},{{path:{DECOY},role:decoy}}]"],
                        output_dir=tmp_path)
    with pytest.raises(SkillError) as err:
        plan_study(spec)
    assert "'text-stats' is given two roles (helper and decoy)" in str(err.value)


def test_unknown_role_is_a_dotted_config_error(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["skill=custom", f"skill.paths=[{SKILL}]", f"skill.support=[{{path:{DECOY},role:mentor}}]"],
                     output_dir=tmp_path)
    assert "skill.support[0].role: Input should be 'prerequisite', 'helper', 'reference' or 'decoy'" in str(err.value)


def test_bundle_stages_every_member_with_skill_and_none_in_the_baseline(tmp_path):
    a, b = _skill(tmp_path / "b", "bundle-a"), _skill(tmp_path / "b", "bundle-b")
    spec = compose_spec(["skill=custom", f"skill.paths=[{a},{b}]", "skill.intervention=bundle",
                         "skill.intervention_name=csv-kit"], output_dir=tmp_path)
    result = emit_study(spec, tmp_path / "tasks")
    assert len(result.tasks) == 8  # 2 members x 2 cases x 2 conditions
    for t in result.tasks:
        meta = read_task_metadata(t.path)
        assert meta["intervention"] == "csv-kit" and meta["intervention_kind"] == "bundle"
        assert meta["intervention_members"] == ["bundle-a", "bundle-b"]
        assert t.path.name.startswith("csv-kit.")
        assert _staged(t) == (["bundle-a", "bundle-b"] if t.condition == "with_skill" else [])
    plan = plan_study(spec)
    assert {tp.target.name for tp in plan.tasks} == {"bundle-a", "bundle-b"}  # the case's owner
    # Members' case ids are qualified by the member, so repeats across members pair apart.
    assert {tp.case.id for tp in plan.tasks} == {
        "bundle-a.bundle-a-explicit-1", "bundle-a.bundle-a-negative-1",
        "bundle-b.bundle-b-explicit-1", "bundle-b.bundle-b-negative-1"}


def test_example_skills_as_one_bundle(tmp_path):
    plan = plan_study(compose_spec(["skill=examples_bundle"], output_dir=tmp_path))
    assert {tp.intervention_name for tp in plan.tasks} == {"aces-examples"}
    assert len({tp.case.id for tp in plan.tasks}) == 16  # four skills' explicit-1 etc. kept apart
    with_skill = [tp for tp in plan.tasks if tp.condition == "with_skill"]
    assert all(len(tp.staged) == 4 for tp in with_skill)


def test_bundle_needs_a_name(tmp_path):
    with pytest.raises(ConfigError) as err:
        compose_spec(["skill=custom", f"skill.paths=[{SKILL}]", "skill.intervention=bundle"], output_dir=tmp_path)
    assert "skill.intervention_name" in str(err.value)


def test_plugin_is_one_intervention_named_by_its_manifest(tmp_path):
    plugin = tmp_path / "my-plugin"
    _skill(plugin / "skills", "plug-a")
    _skill(plugin / "skills", "plug-b")
    (plugin / ".claude-plugin").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "data-tools", "version": "0.3.0"}')
    spec = compose_spec(["skill=custom", f"skill.paths=[{plugin}]", "skill.intervention=plugin"], output_dir=tmp_path)
    result = emit_study(spec, tmp_path / "tasks")
    metas = [read_task_metadata(t.path) for t in result.tasks]
    assert {m["intervention"] for m in metas} == {"data-tools"}
    assert {m["intervention_kind"] for m in metas} == {"plugin"}
    with_skill = [t for t in result.tasks if t.condition == "with_skill"]
    assert all(_staged(t) == ["plug-a", "plug-b"] for t in with_skill)


def test_plugin_manifest_without_a_name_is_refused(tmp_path):
    plugin = tmp_path / "p"
    _skill(plugin / "skills", "plug-a")
    (plugin / ".claude-plugin").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"version": "1"}')
    spec = compose_spec(["skill=custom", f"skill.paths=[{plugin}]", "skill.intervention=plugin"], output_dir=tmp_path)
    with pytest.raises(SkillError) as err:
        plan_study(spec)
    assert "plugin.json:name: plugin manifest has no string 'name'" in str(err.value)


def test_decoy_draw_is_seeded_nested_and_stable():
    pool = [load_skill(p) for p in sorted((Path(__file__).resolve().parents[2] / "aces_bench" / "examples" / "decoy-pool").iterdir()) if (p / "SKILL.md").is_file()]
    draws = {n: [s.name for s in select_decoys(pool, n, seed=7)] for n in (1, 5, 10, 20)}
    assert set(draws[1]) <= set(draws[5]) <= set(draws[10]) <= set(draws[20])
    assert draws[5] == [s.name for s in select_decoys(list(reversed(pool)), 5, seed=7)]  # order-free
    assert draws[5] != [s.name for s in select_decoys(pool, 5, seed=8)]
    with pytest.raises(SkillError) as err:
        select_decoys(pool, len(pool) + 1)
    assert f"decoys.size={len(pool) + 1} but the decoy pool holds only {len(pool)} skills" in str(err.value)


def test_the_default_pool_holds_fifty_working_decoys_and_sizes_are_recorded(tmp_path):
    for size in (1, 50):
        spec = compose_spec(["skill=custom", f"skill.paths=[{SKILL}]", "workspace=group", POOL,
                             f"decoys.size={size}", "decoys.seed=3"], output_dir=tmp_path)
        plan = plan_study(spec)
        assert len(plan.decoy_pool) == 50
        result = emit_study(spec, tmp_path / f"tasks{size}")
        for t in result.tasks:
            meta = read_task_metadata(t.path)
            assert (meta["decoy_size"], meta["decoy_seed"], meta["decoy_set"]) == (size, 3, f"pool-n{size}-s3")
            n_decoys = sum(1 for s in meta["staged_skills"] if s["role"] == "decoy")
            assert n_decoys == size
            assert meta["n_visible_skills"] == size + (t.condition == "with_skill")
