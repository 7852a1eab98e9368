"""Known effects for the gate's rule (issue 33), run live on the reference agent:

- ``coin-tally`` (stochastic helper): its script is right on about 70% of its runs (it
  draws afresh each run) where the baseline never answers a coin tally: true lift +0.7 per
  attempt. Its own study of 12 cases with ``study.n_attempts=3``, gated as a user would
  (``aces-bench report <dir> --fail-under-lift 0.05``), must pass: every attempt counts
  (case means of 1/3 and 2/3 are not rounded to ties). The old rule failed such a skill in
  97.7% of simulated studies; this one fails it in about 1 in 20,000 (12 cases).
- a multi-skill A/A study: three skills that change nothing (copies of the useless
  ``line-count-tips`` under other names), gated together: none reads "helps", and the
  gate line and the report state the family (Holm over the three skills).
"""

from __future__ import annotations

import json
import shutil

import pytest
from support.known_effect import SKILLS, USELESS, _report, study_overrides
from support.known_effect_harnesses import REFERENCE

from aces_bench.analysis.gate import gate_verdicts, settings_for
from aces_bench.config.compose import compose_spec
from aces_bench.records.summary import read_summary
from aces_bench.study.entry import run_study

pytestmark = pytest.mark.sandbox  # skipped without bubblewrap (tests/conftest.py)

STOCHASTIC = "coin-tally"


@pytest.fixture(scope="module")
def stochastic(tmp_path_factory):
    base = tmp_path_factory.mktemp("known-effect-power")
    study = base / "study"
    run_study(compose_spec([*study_overrides(REFERENCE, skills=[SKILLS / STOCHASTIC], workspace="isolation",
                                             root_parent=base), "study.n_attempts=3"], output_dir=study))
    rc, lines = _report(study, base / "report", "--fail-under-lift", "0.05")
    return rc, lines, read_summary(base / "report" / "summary.json")


def test_a_stochastic_helper_at_a_threshold_with_three_attempts_passes(stochastic):
    rc, lines, summary = stochastic
    (cases,) = summary.gate_cases
    assert len(cases.positive) == 12
    # Every attempt counts: some case was right on 1 or 2 of its 3 attempts (all 36 right: 0.7^36).
    assert any(0 < d < 1 for d in cases.positive), cases.positive
    (v,) = gate_verdicts(summary, settings_for(summary, threshold=0.05))
    assert rc == 0 and v.verdict == "helps", lines
    assert v.family == "1 skill" and v.lower_bound > 0.05
    assert any(line.startswith(f"PASS {STOCHASTIC}: helps:") and "betting interval [+0." in line for line in lines)


def _renamed(src, dst, name: str):
    shutil.copytree(src, dst)
    skill_md = dst / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace(f"name: {src.name}", f"name: {name}", 1))
    evals = dst / "evals" / "evals.json"
    data = json.loads(evals.read_text())
    data["skill_name"] = name
    evals.write_text(json.dumps(data, indent=1))
    return dst


@pytest.fixture(scope="module")
def a_a_family(tmp_path_factory):
    base = tmp_path_factory.mktemp("known-effect-a-a")
    names = [f"line-count-tips-{c}" for c in "abc"]
    skills = [_renamed(SKILLS / USELESS, base / "skills" / n, n) for n in names]
    study = base / "study"
    run_study(compose_spec(study_overrides(REFERENCE, skills=skills, workspace="isolation", root_parent=base),
                           output_dir=study))
    rc, lines = _report(study, base / "report", "--fail-under-lift", "0")
    return names, rc, lines, base / "report"


def test_a_multi_skill_a_a_study_reads_no_helps_and_states_its_family(a_a_family):
    names, rc, lines, report = a_a_family
    summary = read_summary(report / "summary.json")
    assert sorted(v.skill for v in summary.gate) == names
    assert all(v.verdict != "helps" for v in summary.gate)
    assert all(v.family == "Holm over 3 skills" for v in summary.gate)
    assert rc == 1 and not any(line.startswith("PASS ") for line in lines)
    assert "Holm across the study's 3 skills with data at 0.05" in lines[-1]
    assert "Family: Holm over 3 skills" in (report / "index.html").read_text()
