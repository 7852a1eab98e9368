"""One real Harbor trial per condition through the pipeline: the reference agent on
the local bubblewrap backend, csv-column-sum explicit-1 with the skill and without."""

from __future__ import annotations

import json
from pathlib import Path

from harbor.models.trajectories import Trajectory
from support.studies import (
    needs_bwrap,
    read_table,
    retained_answer,
    study_overrides,
    wait_until_gone,
)

from aces_bench.config.compose import compose_spec
from aces_bench.records.trials import PAIR_KEY
from aces_bench.study.entry import run_study


def _commands(trial_dir: str) -> list[str]:
    trajectory = Trajectory.model_validate_json(Path(trial_dir, "agent", "trajectory.json").read_text())
    return [call.arguments["command"] for step in trajectory.steps for call in (step.tool_calls or [])]


@needs_bwrap
def test_one_trial_per_condition_through_the_pipeline(tmp_path):
    out = tmp_path / "out"
    spec = compose_spec(study_overrides(root_parent=tmp_path), output_dir=out)
    assert run_study(spec) == out

    table = read_table(out)
    assert len(table) == 2
    by_condition = table.set_index("condition")
    skill, base = by_condition.loc["with_skill"], by_condition.loc["baseline"]
    # The two rows are one pair: same key, different condition.
    assert [skill[k] for k in PAIR_KEY] == [base[k] for k in PAIR_KEY]
    assert (skill["skill"], skill["case_id"], skill["harness"], skill["workspace_mode"]) == (
        "csv-column-sum", "explicit-1", "reference", "isolation")
    assert (skill["n_visible_skills"], base["n_visible_skills"]) == (1, 0)
    assert (skill["status"], base["status"]) == ("ok", "ok")
    assert (skill["reward"], base["reward"]) == (1.0, 0.0)
    assert skill["task_id"] != base["task_id"]

    # Trajectories: the skill arm read SKILL.md and ran its script; the baseline never
    # saw a skill and explored the data instead.
    skill_cmds, base_cmds = _commands(skill["trial_dir"]), _commands(base["trial_dir"])
    assert "cat /skills/csv-column-sum/SKILL.md" in skill_cmds
    assert any("/skills/csv-column-sum/scripts/colsum.py data/sales.csv" in c for c in skill_cmds)
    assert not any("SKILL.md" in c for c in base_cmds)
    assert retained_answer(skill["trial_dir"]) == "total=141.75"
    assert retained_answer(base["trial_dir"]) not in (None, "total=141.75")

    # Graded from those trajectories: execution differs, nothing is left unscored.
    assert (skill["metric_skill_execution"], base["metric_skill_execution"]) == (1.0, 0.0)
    for row in (skill, base):
        assert row["has_trajectory"]
        assert row["metric_security"] == 1.0
        assert row["n_tool_calls"] > 0
        assert (row["input_tokens"], row["output_tokens"]) == (0, 0)  # a non-LLM agent
        assert row["wall_sec"] > 0

    # The other artifacts of the run.
    grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    assert sorted(g["condition"] for g in grades) == ["baseline", "with_skill"]
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["job_dir"] == str(out / "jobs" / table["trial_dir"][0].split("/")[-2])
    assert (out / "trials.csv").is_file()
    procs, roots = wait_until_gone(tmp_path)
    assert procs == [] and roots == []
