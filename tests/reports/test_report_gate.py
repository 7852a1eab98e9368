"""`aces-bench report --fail-under-lift`: the gate's one rule (aces_bench/stats/gate.py),
re-applied from summary.json at the command line's threshold."""

from __future__ import annotations

import pytest

from aces_bench.analysis.cli import _gate, main
from aces_bench.analysis.gate import gate_failures
from aces_bench.cli import main as aces_main
from aces_bench.core.errors import ReportError
from aces_bench.core.io import write_json
from aces_bench.records.gate import GateCases
from aces_bench.records.summary import ReportSummary


@pytest.fixture(scope="module")
def member(study_dir):
    # One sweep member: a single-study dir, as a CI job would gate.
    return study_dir / "terminus-gpt4o"


def _summary(report_dir) -> ReportSummary:
    return ReportSummary.model_validate_json((report_dir / "summary.json").read_text())


def test_three_cases_per_skill_are_not_enough_to_pass(member, tmp_path, capsys):
    out = tmp_path / "r"
    assert main([str(member), "--out", str(out), "--fail-under-lift", "0"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert ("FAIL access-log-latency: not enough cases: 3 case(s): 2 won by more than +0.000, 0 lost, 1 other: the "
            "gate needs 5 distinct cases won by more than +0.000 (p = 0.2656); betting interval [-0.612, +1.000] "
            "(98.33% each side); false activation 100% of 1") in err
    assert err[-1] == ("gate: 3 of 3 skill(s) fail: pass-rate lift credibly above +0.000 (one-sided; Holm across "
                       "the study's 3 skills with data at 0.05), at least 5 cases won, no harm on should-not-use "
                       "cases, null arm consistent with 0 where it ran")
    # Fewer cases required: the test itself still decides (2 wins of 3 cases is p = 1/e = 0.27).
    assert main([str(member), "--out", str(out), "--fail-under-lift", "0", "--min-cases", "2"]) == 1
    err = capsys.readouterr().err
    assert "FAIL access-log-latency: does not reach threshold: pass-rate lift +0.667 over 3 case(s)" in err
    assert "lift > +0.000: p = 0.2656 > 0.01667 (Holm over 3 skills)" in err


def _with_cases(report_dir, tmp_path, *cases: GateCases) -> ReportSummary:
    s = _summary(report_dir).model_copy(update={"gate_cases": list(cases), "gate": []})
    write_json(tmp_path / "summary.json", s)
    return s


def test_five_wins_of_five_pass_with_and_without_the_lower_bound(report_dir, tmp_path, capsys):
    s = _with_cases(report_dir, tmp_path, GateCases(skill="all-win", positive=[1.0] * 5))
    assert gate_failures(s, threshold=0.05) == []
    assert gate_failures(s, threshold=0.05, family="holm") == []
    assert _gate(tmp_path, 0.05, None, None, None) == 0
    out = capsys.readouterr().out
    assert "gate: all 1 skill(s) pass" in out
    # A pass says what it rests on: the verdict, the p-value and the interval it was read from.
    assert ("PASS all-win: helps: pass-rate lift +1.000 over 5 case(s): 5 won by more than +0.050, 0 lost, 0 other; "
            "lift > +0.050: p = 0.04591 <= 0.05; betting interval [+0.069, +1.000] (95% each side)") in out
    assert _gate(tmp_path, 0.05, "holm", None, None) == 0
    # One pair never passes, whatever it shows.
    s = _with_cases(report_dir, tmp_path, GateCases(skill="one", positive=[1.0]))
    (f,) = gate_failures(s, threshold=0.0)
    assert f.line() == ("FAIL one: not enough cases: 1 case(s): 1 won by more than +0.000, 0 lost, 0 other: the gate "
                        "needs 5 distinct cases won by more than +0.000 (p = 0.5155); betting interval [-0.906, "
                        "+1.000] (95% each side)")


def test_the_family_is_holm_by_default_and_per_skill_is_an_explicit_option(report_dir, tmp_path):
    # Issue 33: every skill at 0.05 on its own lets some null skill of many read "helps".
    s = _with_cases(report_dir, tmp_path, *(GateCases(skill=f"s{i}", positive=[1.0] * 5) for i in range(3)))
    failures = gate_failures(s, threshold=0.0)
    assert [f.skill for f in failures] == ["s0", "s1", "s2"]
    assert "p = 0.03624 > 0.01667 (Holm over 3 skills)" in failures[0].reason
    assert gate_failures(s, threshold=0.0, family="holm") == failures  # --lower-bound: the same family
    assert gate_failures(s, threshold=0.0, family="none") == []  # --per-skill, unadjusted
    # Holm steps down: the strongest skill is tested at alpha/3, the next at alpha/2, the last at alpha.
    s = _with_cases(report_dir, tmp_path, GateCases(skill="a", positive=[1.0] * 8),
                    GateCases(skill="b", positive=[1.0] * 7), GateCases(skill="c", positive=[1.0] * 5))
    assert gate_failures(s, threshold=0.0) == []
    # Above what the data can show, each failure states the interval the same test gives, at its Holm level.
    assert all("betting interval [" in f.reason and "(98.33% each side)" in f.reason
               for f in gate_failures(s, threshold=0.9))


def test_harm_over_triggering_and_crashes_fail_in_their_own_words(report_dir, tmp_path):
    s = _with_cases(report_dir, tmp_path,
                    # Seven of eight lost: harm shown at Holm's alpha/3 (five would be p = 0.036).
                    GateCases(skill="harmful", positive=[-1.0] * 7 + [0.0]),
                    GateCases(skill="over-trigger", positive=[1.0] * 6, negative=[-1.0] * 3, negative_pass_with=0.0,
                              negative_pass_base=1.0, false_activation=(3, 3)),
                    # Crashed on 3 of 6 cases where the baseline passes: counted as losses, not dropped.
                    GateCases(skill="crashy", positive=[1.0, 1.0, 1.0, -1.0, -1.0, -1.0]))
    lines = {f.skill: f.reason for f in gate_failures(s, threshold=0.05)}
    assert lines["harmful"].startswith("harms: pass-rate lift -0.875 over 8 case(s)")
    assert lines["over-trigger"] == (
        "harms should-not-use cases: on 3 should-not-use case(s) the skill lowers the pass rate by 1.000 (pass rate "
        "0% with the skill vs 100% without): one-sided p = 0.125 <= 0.2; false activation 100%; betting interval "
        "[-0.019, +1.000] (98.33% each side)")
    assert lines["crashy"].startswith("not enough cases: 6 case(s): 3 won by more than +0.050, 3 lost")


def test_exit_codes_through_the_top_level_cli(member, tmp_path, capsys):
    out = str(tmp_path / "r")
    assert aces_main(["report", str(member), "--out", out, "--fail-under-lift", "0.5"]) == 1
    assert capsys.readouterr().err.count("FAIL ") == 3
    assert aces_main(["report", str(member), "--out", out, "--lower-bound"]) == 2
    assert "--lower-bound, --per-skill, --min-cases and --alpha only apply to the CI gate" in capsys.readouterr().err
    assert aces_main(["report", str(member), "--out", out, "--fail-under-lift", "0", "--outcome", "reward"]) == 2
    assert "the gate is one rule, on the graded pass (final_pass) per case" in capsys.readouterr().err
    assert aces_main(["report", str(member), "--out", out, "--fail-under-lift", "5"]) == 2
    assert "is not a lift a skill can exceed" in capsys.readouterr().err
    with pytest.raises(ReportError, match="SkillsBench's registry has no skills to gate"):
        main(["--skillsbench", str(tmp_path / "r.json"), "--fail-under-lift", "0"])


def test_help_documents_the_gate(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for s in ("--fail-under-lift X", "--lower-bound", "--per-skill", "--min-cases", "CI gate for skill changes", "exits 1",
              "docs/gate.md"):
        assert s in text, s
