"""Issue 9's check on skills the project does not contain: real public skills (three
authors, ../shared/data/public-skills), given cases in SkillEvaluator's legacy format
(a top-level list with ``question`` and ``ground_truth``, fixtures relative to
``evals/``), run through the real pipeline on the reference agent.

These skills are prose (their scripts are not shipped), so the agent that reads one
answers as it would without it: both arms write the same answer. The issue saw such
skills get outcome_only lifts of +0.33 to +0.40 and a passing gate. Here each must get an
outcome lift of 0 whose interval contains 0 (none at all when no pair differs: "no
variation observed"), and ``report --fail-under-lift 0.05`` must fail each of them.
The precondition is checked from the data, not assumed: the with-skill arm did read
the skill, and both arms' retained answers are the same text.

The verifier-reward counterpart on real SkillsBench trials (a reward lift of -1 fails the
default gate; arms that scored alike fail it too) is
``tests/grading/test_grading_cli.py::test_real_skills_fail_the_default_gate_unless_the_verifier_reward_rose``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from support.known_effect import study_overrides

from aces_bench.analysis.cli import main as report_main
from aces_bench.config.compose import compose_spec
from aces_bench.study.entry import run_study

PUBLIC = Path(__file__).resolve().parents[3] / "shared" / "data" / "public-skills"
# skill folder -> cases: (question, the fixture's lines, ground truth)
SKILLS = {
    "obra__superpowers/systematic-debugging": [
        ("A test failure shows unexpected behavior; the bug log is attached. How many lines does the test log have?",
         ["FAIL test_login", "expected 200 got 500", "traceback: KeyError 'user'", "FAIL test_logout"], "4 lines"),
        ("Another test failure with unexpected behavior: how many lines does this test log have before the fix?",
         ["FAIL test_parse", "assertion error on line 12"], "2 lines"),
        ("Debug the failing test from its bug log: which test failed first? Give its number in the run.",
         ["run 7: ok", "run 8: ok", "run 9: FAIL test_cache"], "9"),
    ],
    "openai__skills/create-plan": [
        ("Create a concise plan for the coding task in the notes: how many steps does the draft list?",
         ["add a --json flag", "write tests", "update the README"], "3 steps"),
        ("Create a concise plan for this coding task; how many lines are in the draft plan?",
         ["refactor the parser", "add type hints", "bench it", "ship"], "4 lines"),
        ("Create a plan for the coding task and estimate its size in hours from the notes.",
         ["port the CLI", "migrate configs"], "12 hours"),
    ],
    "anthropics__skills/internal-comms": [
        ("Write an internal status report (internal communications) from the updates: how many updates are there?",
         ["shipped v2 search", "hired two engineers", "closed the Q3 audit"], "3 updates"),
        ("Internal comms: a leadership update from these project updates. How many lines do the updates have?",
         ["budget approved", "launch moved to May"], "2 lines"),
        ("Write the company newsletter (internal communications): what is the headcount after the hires?",
         ["hired two engineers", "one transfer in"], "48"),
    ],
}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    if not PUBLIC.is_dir():
        pytest.skip(f"../shared is absent ({PUBLIC}): this check needs real public skills")
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed; the check runs real trials on the local backend")
    base = tmp_path_factory.mktemp("unseen")
    paths = []
    for folder, cases in SKILLS.items():
        skill = base / "skills" / folder.split("/")[1]
        shutil.copytree(PUBLIC / folder, skill)
        files = skill / "evals" / "files"
        files.mkdir(parents=True)
        legacy = []
        for i, (question, lines, truth) in enumerate(cases, 1):
            (files / f"input-{i}.txt").write_text("\n".join(lines) + "\n")
            legacy.append({"id": f"case-{i}", "question": question, "ground_truth": truth,
                           "files": [f"files/input-{i}.txt"], "expected_skill": skill.name})
        (skill / "evals" / "evals.json").write_text(json.dumps(legacy, indent=1) + "\n")
        paths.append(skill)
    out = base / "out"
    run_study(compose_spec(study_overrides(("harness=reference",), skills=paths, workspace="isolation",
                                           root_parent=base), output_dir=out))
    return out, [p.name for p in paths]


def _answer(trial_dir: str) -> str | None:
    """The final answer.txt the verifier retained, wherever Harbor put the artifacts."""
    for ws in ("artifacts/workspace", "artifacts/logs/artifacts/workspace"):
        path = Path(trial_dir) / ws / "answer.txt"
        if path.is_file():
            return path.read_text()
    return None


def test_the_with_skill_arm_read_each_skill_and_both_arms_answered_alike(study):
    out, skills = study
    trials = pd.read_parquet(out / "trials.parquet")
    assert set(trials["status"]) == {"ok"}
    assert sorted(trials["skill"].unique()) == sorted(skills)
    by = trials.set_index(["skill", "case_id", "condition"])
    for (skill, case), _ in trials.groupby(["skill", "case_id"]):
        assert by.loc[(skill, case, "with_skill"), "activated"] == 1.0, (skill, case)
        assert by.loc[(skill, case, "baseline"), "activated"] == 0.0, (skill, case)
        answers = [_answer(by.loc[(skill, case, arm), "trial_dir"]) for arm in ("with_skill", "baseline")]
        assert answers[0] is not None
        assert answers[0] == answers[1], (skill, case, answers)


def test_alike_arms_give_a_lift_interval_containing_zero_and_a_failing_gate(study, tmp_path, capsys):
    out, skills = study
    rc = report_main([str(out), "--out", str(tmp_path / "r"), "--fail-under-lift", "0.05"])
    err = capsys.readouterr().err.splitlines()
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    rows = {r["group"]["skill"]: r for r in summary["by_skill"] if r["outcome"] == "outcome"}
    assert sorted(rows) == sorted(skills)
    for skill, row in rows.items():
        assert row["n"] == 3, (skill, row)
        assert row["lift"] == 0.0, (skill, row)
        if row["ci_lo"] is None:
            assert row["no_variation"] and row["ci_note"] == "no variation observed (n = 3)", (skill, row)
        else:
            assert row["ci_lo"] <= 0.0 <= row["ci_hi"], (skill, row)
        # The gate's words (issue 22): three alike pairs win nothing.
        assert any(line.startswith(f"FAIL {skill}: not enough cases: 3 case(s): 0 won by more than +0.050")
                   for line in err), err
    assert rc == 1
    assert any(line.startswith(f"gate: {len(skills)} of {len(skills)} skill(s) fail") for line in err), err
