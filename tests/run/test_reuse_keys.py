"""The baseline-reuse key changes with every input that can change a baseline trial's
outcome, and only with those: a change to the target skill alone leaves it as it was.
One test per input (emit only: keys are computed from the emitted task ids)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.emitters import emit_study
from aces_bench.run.reuse import ReuseKeys
from aces_bench.run.runner import agent_config, environment_config, job_config

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"
DECOY = ROOT / "tests" / "fixtures" / "decoys" / "text-stats"
MODEL = ["harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
         "model.base_url=http://127.0.0.1:9/v1"]


@pytest.fixture
def folders(tmp_path):
    skill, decoy = tmp_path / "skills" / "csv-column-sum", tmp_path / "decoys" / "text-stats"
    shutil.copytree(SKILL, skill)
    shutil.copytree(DECOY, decoy)
    return skill, decoy


def baseline_keys(tmp_path: Path, skill: Path, decoy: Path, *extra: str) -> dict[tuple[str, str, int], str]:
    """(case, condition, attempt) -> reuse key of every baseline and null trial."""
    out = tmp_path / f"study-{len(list(tmp_path.glob('study-*')))}"
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "workspace=group", "decoys=none",
                         f"decoys.paths=[{decoy}]", "study.n_attempts=2", "study.controls=[null]", "emit_only=true",
                         *extra], output_dir=out)
    emitted = emit_study(spec, out / "tasks")
    keys = ReuseKeys.of_job(spec, job_config(spec, emitted, out / "jobs"))  # as the study makes them
    return {(t.case_id, t.condition, a): keys.key(t.task_id, a) for t in emitted.tasks
            if t.condition in ("baseline", "null") for a in (1, 2)}


def test_keys_are_stable_and_distinct_per_attempt_and_arm(tmp_path, folders):
    first, again = baseline_keys(tmp_path, *folders), baseline_keys(tmp_path, *folders)
    assert first == again
    assert len(set(first.values())) == len(first) == 8  # 2 cases x (baseline, null) x 2 attempts


def test_the_plan_command_looks_up_the_keys_the_study_stores_under(tmp_path, folders):
    # `aces-bench plan` has no emitted job: it builds the keys from the agent and environment
    # configs directly. A difference would make it count stored trials the study then runs.
    skill, decoy = folders
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "emit_only=true"], output_dir=tmp_path / "s")
    emitted = emit_study(spec, tmp_path / "s" / "tasks")
    study = ReuseKeys.of_job(spec, job_config(spec, emitted, tmp_path / "s" / "jobs"))
    plan = ReuseKeys(spec, agent_config(spec), environment_config(spec))
    assert [study.key(t.task_id, 1) for t in emitted.tasks] == [plan.key(t.task_id, 1) for t in emitted.tasks]


def test_a_change_to_the_target_skill_alone_keeps_every_baseline_key(tmp_path, folders):
    skill, decoy = folders
    before = baseline_keys(tmp_path, skill, decoy)
    md = skill / "SKILL.md"
    md.write_text(md.read_text() + "\nOne more line of advice.\n")
    (skill / "scripts" / "colsum.py").write_text((skill / "scripts" / "colsum.py").read_text() + "\n# faster\n")
    assert baseline_keys(tmp_path, skill, decoy) == before


def test_a_changed_case_file_invalidates_that_case_only(tmp_path, folders):
    skill, decoy = folders
    before = baseline_keys(tmp_path, skill, decoy)
    csv = skill / "evals" / "files" / "sales.csv"
    csv.write_text(csv.read_text().replace("\n", "\r\n", 1))  # same rows, other bytes
    after = baseline_keys(tmp_path, skill, decoy)
    assert all(after[k] != before[k] for k in before)  # both cases stage sales.csv


def test_a_changed_assertion_or_prompt_invalidates_that_case(tmp_path, folders):
    skill, decoy = folders
    before = baseline_keys(tmp_path, skill, decoy)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"][0]["assertions"][0]["tolerance"] = 0.01
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    after = baseline_keys(tmp_path, skill, decoy)
    changed = {k for k in before if after[k] != before[k]}
    assert changed == {k for k in before if k[0] == "explicit-1"}


def test_a_changed_decoy_invalidates_every_baseline(tmp_path, folders):
    skill, decoy = folders
    before = baseline_keys(tmp_path, skill, decoy)
    md = decoy / "SKILL.md"
    md.write_text(md.read_text() + "\nA decoy that reads differently.\n")
    after = baseline_keys(tmp_path, skill, decoy)
    assert all(after[k] != before[k] for k in before)


def test_a_different_model_or_model_version_invalidates_every_baseline(tmp_path, folders):
    base = baseline_keys(tmp_path, *folders, *MODEL)
    other_model = baseline_keys(tmp_path, *folders, *MODEL[:2], "model.name=openai/test-model-2", MODEL[3])
    dated = baseline_keys(tmp_path, *folders, *MODEL, "model.version=2026-01-15")
    assert all(other_model[k] != base[k] and dated[k] != base[k] for k in base)
    assert all(dated[k] != other_model[k] for k in base)


def test_a_changed_grader_version_or_verifier_invalidates_every_baseline(tmp_path, folders, monkeypatch):
    import aces_bench.emitters.harbor_task as harbor_task

    before = baseline_keys(tmp_path, *folders)
    monkeypatch.setattr(harbor_task, "GRADER_VERSION", "999")
    after = baseline_keys(tmp_path, *folders)
    assert all(after[k] != before[k] for k in before)


def test_a_changed_harness_workspace_or_backend_setting_invalidates_every_baseline(tmp_path, folders):
    before = baseline_keys(tmp_path, *folders)
    for override in ("+harness.kwargs.max_steps=3", "workspace.agent_timeout_sec=301", "workspace.memory_mb=4096",
                     "+backend.kwargs.require_limits=true"):
        after = baseline_keys(tmp_path, *folders, override)
        assert all(after[k] != before[k] for k in before), override
