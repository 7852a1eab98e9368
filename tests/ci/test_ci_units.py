"""The pieces of ``aces-bench ci`` without trials: change detection, the paired
regression judgement, the policy file, and the LV1/LV2 rules on a real skill folder."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from aces_bench.ci.changes import detect
from aces_bench.ci.compare import compare
from aces_bench.ci.policy import load_policy
from aces_bench.ci.suggest import FIRES_ON_NEGATIVES, Lv1Item, classify, lv2
from aces_bench.core.errors import ConfigError

FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "skills" / "csv-column-sum"


def _frame(values: dict[str, float], skill: str = "s") -> pd.DataFrame:
    rows = [{"skill": skill, "case_id": c, "harness": "h", "model": "m", "workspace_mode": "isolation",
             "decoy_set": "none", "condition": "with_skill", "status": "ok", "attempt": 1, "reward": v,
             "composite": v} for c, v in values.items()]
    return pd.DataFrame(rows)


def test_a_skill_regresses_only_when_the_paired_interval_is_below_zero():
    before = _frame({f"c{i}": 1.0 for i in range(5)})
    worse = _frame({"c0": 0.0, "c1": 0.0, "c2": 0.0, "c3": 0.0, "c4": 1.0})
    [c] = compare(worse, before, ["s"], "composite")
    assert c.status == "regressed" and c.ci_hi < 0 and c.worse_cases == ["c0", "c1", "c2", "c3"]
    one_worse = _frame({"c0": 0.0, "c1": 1.0, "c2": 1.0, "c3": 1.0, "c4": 1.0})
    [c] = compare(one_worse, before, ["s"], "composite")
    assert c.status == "no significant change" and c.ci_lo < 0 < c.ci_hi  # a raw drop is not a regression
    [c] = compare(_frame({"c0": 0.0}), _frame({"c0": 1.0}), ["s"], "composite")
    assert c.status.startswith("not judged")
    [c] = compare(worse, None, ["s"], "composite")
    assert c.status.startswith("no baseline")


def test_the_policy_file_is_validated_with_the_key_and_the_valid_ones(tmp_path):
    p = tmp_path / "policy.yaml"
    p.write_text("min_pass_rate: 0.8\nno_regression: false\n")
    assert load_policy(p).min_pass_rate == 0.8
    p.write_text("min_pass_rat: 0.8\n")
    with pytest.raises(ConfigError) as err:
        load_policy(p)
    assert "min_pass_rat" in str(err.value) and "min_pass_rate" in str(err.value)


def test_the_policy_gate_is_the_studys_gate_model_every_key_and_default(tmp_path):
    from aces_bench.core.gate import GateSettings

    p = tmp_path / "policy.yaml"
    p.write_text("gate:\n  null_alpha: 0.01\n  harm_alpha: 0.1\n")
    gate = load_policy(p).gate
    assert gate == GateSettings(null_alpha=0.01, harm_alpha=0.1)  # the rest at the study's own defaults
    p.write_text("gate:\n  min_case: 3\n")
    with pytest.raises(ConfigError) as err:
        load_policy(p)
    assert "min_case" in str(err.value)


def test_change_detection_maps_files_to_skills_and_adds_dependants(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "r"
    for name in ("a", "b", "c"):
        shutil.copytree(FIXTURE, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        md = repo / name / "SKILL.md"
        md.write_text(md.read_text().replace("name: csv-column-sum", f"name: {name}"))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (repo / "a" / "evals" / "evals.json").write_text((repo / "a" / "evals" / "evals.json").read_text() + "\n")
    changed, found = detect(repo, "HEAD", [repo])
    assert [c.name for c in changed] == ["a"] and len(found) == 3
    assert changed[0].reason == "changed: evals/evals.json"
    changed, _ = detect(repo, "HEAD", [repo], support={"a": ["b"]})
    assert {c.name: c.reason for c in changed} == {"a": "changed: evals/evals.json", "b": "depends on a (support skill)"}
    with pytest.raises(ConfigError):
        detect(repo, "no-such-ref", [repo])


@pytest.mark.parametrize(("items", "cls", "added"), [
    ([Lv1Item(metric="skill_execution", check="activation", detail="SKILL.md never read", step_id=None)],
     "never activated", "+description: Sum a numeric column of a CSV file, skipping blank cells. Use when asked for "
                        "the total of a CSV column. Use when use the csv-column-sum skill to sum the amount column"),
    ([Lv1Item(metric="skill_execution", check="execution", step_id=4,
              detail="scripts/colsum.py invoked 2 time(s), every invocation failed")],
     "wrong arguments", "+python3 scripts/colsum.py data/sales.csv"),
    ([Lv1Item(metric="skill_execution", check="workflow_order", step_id=2, detail="script ran before the skill was read")],
     "skipped step", "+1. Read this SKILL.md to the end before running anything."),
])
def test_lv2_rules_write_a_diff_for_each_known_failure_class(tmp_path, items, cls, added):
    skill = tmp_path / "csv-column-sum"
    shutil.copytree(FIXTURE, skill, ignore=shutil.ignore_patterns("__pycache__"))
    assert classify(items) == cls
    diff, note = lv2(skill, "explicit-1", cls)
    assert diff.startswith("--- a/SKILL.md\n+++ b/SKILL.md\n") and added in diff, diff
    assert note


def test_an_unknown_failure_gets_no_lv2(tmp_path):
    items = [Lv1Item(metric="accuracy", check="q1", detail="wrong total", step_id=None)]
    assert classify(items) is None
    assert lv2(FIXTURE, "explicit-1", None) == (None, "none: no rule for this failure")


def test_a_skill_that_fires_on_should_not_use_cases_is_narrowed_never_widened(tmp_path):
    skill = tmp_path / "csv-column-sum"
    shutil.copytree(FIXTURE, skill, ignore=shutil.ignore_patterns("__pycache__"))
    fired = [Lv1Item(metric="skill_execution", check="activation", step_id=2,
                     detail="negative control: skill 'csv-column-sum' was triggered at step 2")]
    assert classify(fired) == "never activated"  # what a positive case's failed activation means
    assert classify(fired, negative_control=True) == FIRES_ON_NEGATIVES
    diff, note = lv2(skill, "negative-1", FIRES_ON_NEGATIVES)
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert "+## When not to use" in diff and "narrow its description" in note
    assert "+- Requests like: how many lines does the file have. Answer those without this skill." in added
    # Never a wider trigger: the description keeps its one "Use when", gains no other, and gains
    # no word of the should-not-use request (a word-matching router would fire on it more).
    (desc,) = [line for line in added if line.startswith("+description:")]
    assert sum(line.count("Use when") for line in added) == 1
    assert not {"how", "many", "lines", "does", "have"} & set(desc.casefold().replace(".", " ").replace(",", " ").split())


def test_an_over_broad_description_is_narrowed_until_the_router_stays_out(tmp_path):
    # A skill whose description claims every question about a file fires on a should-not-use
    # request on the reference agent's router; the suggested SKILL.md drops the broad claim,
    # names what its own cases ask, and the same router then stays out of that request and
    # still routes the skill's own.
    from aces_bench.agents.routing import SkillCard, route

    skill = tmp_path / "memo-todos"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: memo-todos\ndescription: Counts the open TODO markers of a memo. "
                                    "Use for any question about any file - lines, verses, memos, logs, anything.\n"
                                    "---\n# Memo todos\n")
    own = ["How many open TODO markers does the memo have?", "Count the TODO markers left in this memo."]
    negative = "How many lines do the verses have?"
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "memo-todos", "evals": [
        *({"id": f"todo-{i}", "prompt": p} for i, p in enumerate(own)),
        {"id": "neg-verses", "prompt": negative, "expected_skill": None}]}))

    def card(text: str) -> SkillCard:
        description = next(line for line in text.splitlines() if line.startswith("description:"))
        return SkillCard(key="memo-todos", name="memo-todos", description=description.split(":", 1)[1].strip())

    before = (skill / "SKILL.md").read_text()
    assert route(negative, [card(before)]).chosen == "memo-todos"
    diff, _ = lv2(skill, "neg-verses", FIRES_ON_NEGATIVES)
    new_desc = next(line[1:] for line in diff.splitlines() if line.startswith("+description:"))
    assert "any question" not in new_desc and "Only for requests about" in new_desc, diff
    assert route(negative, [card(new_desc)]).chosen is None
    assert all(route(p, [card(new_desc)]).chosen == "memo-todos" for p in own)


def test_pass_rates_are_per_skill_and_count_failures():
    from aces_bench.ci.run import pass_rates

    rows = [{"skill": s, "case_id": f"c{i}", "condition": "with_skill", "final_pass": p, "negative_control": False}
            for s, passes in (("good", [True, True, True, True]), ("bad", [False, False, None, True]))
            for i, p in enumerate(passes)]
    assert pass_rates(pd.DataFrame(rows), ["good", "bad"]) == {"good": (4, 4), "bad": (1, 3)}
