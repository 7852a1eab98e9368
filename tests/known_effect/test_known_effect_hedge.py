"""Known-effect skills for issue 33 (hedged answers, should-not-use regressions, the skill's own
setup failures), each in its own study on the reference agent through the real pipeline,
gated as a user would: ``aces-bench report <dir> --fail-under-lift 0.05``.

By construction:

- ``hedge-tally`` computes the right tally checksum c and answers "tally: c or c-2 or c+2"
  (the right value first). Three of its cases check the number without a label, three
  with the label ``tally``; a hedge is no answer, so every with-skill trial fails: lift 0
  against a baseline that cannot compute the checksum, the gate fails. (The old rule
  passed all six: up to 3 same-size rivals without a label, the first number after a label.)
- ``tally-lines`` wins all 6 of its cases, and its description claims every question about
  a file's lines, so it fires on its 3 should-not-use cases (false activation 100%) and
  answers one of them wrong (a poem without a trailing newline; the baseline counts it
  right). It must not read "helps": this depends on the gate's regression rule for
  should-not-use cases (issue 33 item 3, the gate engineer's change); on a branch without
  it this test fails, on purpose.
- ``bom-tally`` is tally-checksum saved with a byte-order mark before its frontmatter, and
  ``long-tally`` has a 214-line frontmatter beside a decoy in group mode: aces-bench loads
  both, the reference agent's listing does not show them (it wants "---" on line 1 and
  reads 200 lines of frontmatter). The skill's own setup failed, so each with-skill trial is
  a failure of its arm (intention to treat), never an exclusion: no pair is left out and
  the gate fails on a lift of 0 - 0.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pandas as pd
import pytest
from support.known_effect import DECOYS, GATE_THRESHOLD, SKILLS, study_overrides
from support.known_effect_harnesses import REFERENCE

from aces_bench.analysis.cli import main as report_main
from aces_bench.analysis.gate import gate_verdicts, settings_for
from aces_bench.config.compose import compose_spec
from aces_bench.records.summary import read_summary
from aces_bench.records.trials import read_grades
from aces_bench.study.entry import run_study

pytestmark = pytest.mark.sandbox  # skipped without bubblewrap (tests/conftest.py)

HEDGER, NEGATIVE_BREAKER, BAD_FRONTMATTER, LONG_FRONTMATTER = "hedge-tally", "tally-lines", "bom-tally", "long-tally"


def _study(out: Path, skill: str, *, workspace: str = "isolation", decoys=()) -> tuple[int, list[str], Path]:
    """One skill's own study, reported and gated at 0.05: (exit code, printed lines, its folder)."""
    study = out / skill
    run_study(compose_spec(study_overrides(REFERENCE, skills=[SKILLS / skill], workspace=workspace, decoys=decoys,
                                           root_parent=out), output_dir=study))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        rc = report_main([str(study), "--out", str(out / f"report-{skill}"), "--fail-under-lift", str(GATE_THRESHOLD)])
    return rc, buf.getvalue().splitlines(), study


def _verdict(out: Path, skill: str):
    summary = read_summary(out / f"report-{skill}" / "summary.json")
    (v,) = gate_verdicts(summary, settings_for(summary, threshold=GATE_THRESHOLD))
    return summary, v


def _trials(study: Path):
    return pd.read_parquet(study / "trials.parquet")


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("known-effect-issue-33")


def test_a_hedger_fails_labelled_and_unlabelled_checks_and_the_gate(out):
    rc, lines, study = _study(out, HEDGER)
    summary, v = _verdict(out, HEDGER)
    trials = _trials(study)
    with_skill = trials.loc[trials["condition"] == "with_skill"]
    assert len(with_skill) == 6 and with_skill["status"].eq("ok").all()
    # Every hedged answer fails its check, the three labelled as the three unlabelled.
    answers = [g.final_answer for f in sorted(study.rglob("grades.jsonl")) for g in read_grades(f)
               if g.condition == "with_skill"]
    assert len(answers) == 6 and all(" or " in a for a in answers), answers
    assert with_skill["final_pass"].eq(False).all(), with_skill[["case_id", "final_pass"]]
    assert v.verdict != "helps" and not v.passed and v.n_wins == 0
    assert rc != 0, lines


def test_a_skill_that_breaks_one_of_three_should_not_use_cases_does_not_help(out):
    rc, lines, study = _study(out, NEGATIVE_BREAKER)
    summary, v = _verdict(out, NEGATIVE_BREAKER)
    trials = _trials(study)
    neg = trials.loc[trials["case_id"].str.startswith("negative-")]
    by = {(r.case_id, r.condition): r.final_pass for r in neg.itertuples()}
    # By construction: the baseline right on all three, the skill wrong on poem-z alone.
    assert all(by[(f"negative-poem-{k}", "baseline")] is True for k in "xyz")
    assert [by[(f"negative-poem-{k}", "with_skill")] for k in "xyz"] == [True, True, False]
    assert v.n_wins == 6 and v.negative.false_activation == 1.0
    # Issue 33 item 3 (the gate's regression rule): a should-not-use case the baseline passes
    # and the skill fails in every attempt is a regression; the verdict names it.
    assert v.verdict != "helps" and not v.passed, v.reason
    assert "negative-poem-z" in v.reason
    assert rc != 0, lines


@pytest.mark.parametrize(("skill", "workspace"), [(BAD_FRONTMATTER, "isolation"), (LONG_FRONTMATTER, "group")])
def test_a_skill_that_breaks_its_own_listing_fails_its_trials_instead_of_leaving_them_out(out, skill, workspace):
    decoys = [DECOYS / "ledger-checksum"] if workspace == "group" else []
    rc, lines, study = _study(out, skill, workspace=workspace, decoys=decoys)
    summary, v = _verdict(out, skill)
    trials = _trials(study)
    with_skill = trials.loc[trials["condition"] == "with_skill"]
    assert len(with_skill) == 6
    # Not shown its target: the skill's own setup failed, a failure of the with-skill arm.
    assert with_skill["target_listed"].eq(False).all()
    assert with_skill["status"].eq("setup_error").all() and with_skill["trial_class"].eq("arm_failure").all()
    assert with_skill["final_pass"].eq(False).all()
    if workspace == "group":
        assert with_skill["visible_skills"].eq("ledger-checksum").all()  # the decoy was listed, the target not
    a = summary.intention_to_treat
    assert a.n_excluded == 0 and a.n_analysed == 6
    assert a.flagged_trials == {"with-skill trial(s) not shown the target skill, counted as failures": 6}
    assert v.n_excluded_pairs == 0 and v.n_cases == 6 and v.verdict != "no data" and not v.passed
    assert rc != 0, lines
