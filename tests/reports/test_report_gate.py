"""`aces-bench report --fail-under-lift`: a CI gate on each skill's lift or its CI's lower bound."""

from __future__ import annotations

import pytest

from aces_bench.cli import main as aces_main
from aces_bench.errors import ReportError
from aces_bench.reports.cli import main
from aces_bench.reports.gate import gate_failures
from aces_bench.reports.summary import ReportSummary


@pytest.fixture(scope="module")
def member(study_dir):
    # One sweep member: a single-study dir, as a CI job would gate.
    return study_dir / "terminus-gpt4o"


def _by_skill(report_dir, outcome="outcome"):
    s = ReportSummary.model_validate_json((report_dir / "summary.json").read_text())
    return s, {r.group["skill"]: r for r in s.by_skill if r.outcome == outcome}


def test_gate_passes_and_fails_on_the_lift(member, tmp_path, capsys):
    out = tmp_path / "r"
    assert main([str(member), "--out", str(out), "--fail-under-lift", "-1"]) == 0
    text = capsys.readouterr()
    assert "gate: all 3 skill(s) at or above outcome lift -1.000" in text.out and text.err == ""
    _, rows = _by_skill(out)
    lifts = sorted(r.lift for r in rows.values())
    cut = (lifts[0] + lifts[1]) / 2  # exactly one skill below
    assert main([str(member), "--out", str(out), "--fail-under-lift", str(cut)]) == 1
    err = capsys.readouterr().err.splitlines()
    low = min(rows.values(), key=lambda r: r.lift)
    assert err == [f"FAIL {low.group['skill']}: outcome lift {low.lift:+.3f} < {cut:+.3f} (n={low.n} pairs)",
                   f"gate: 1 of 3 skill(s) below outcome lift {cut:+.3f}"]


def test_lower_bound_and_outcome(member, tmp_path, capsys):
    out = tmp_path / "r"
    code = main([str(member), "--out", str(out), "--fail-under-lift", "0", "--lower-bound", "--outcome", "reward"])
    _, rows = _by_skill(out, "reward")
    failing = sorted(k for k, r in rows.items() if r.adj_ci_lo is None or r.adj_ci_lo < 0)
    err = capsys.readouterr().err
    assert code == (1 if failing else 0)
    for k in failing:
        r = rows[k]
        if r.adj_ci_lo is not None:
            assert (f"FAIL {k}: reward lift {r.lift:+.3f}, adjusted lower bound {r.adj_ci_lo:+.3f} < +0.000 "
                    f"({r.adjustment}; n={r.n} pairs, {r.n_cases} cases)") in err
    # The multiplicity-adjusted bound is wider than the per-skill one, which is below the point estimate.
    assert all(r.adj_ci_lo <= r.ci_lo <= r.lift for r in rows.values() if r.adj_ci_lo is not None)
    assert {r.adjustment for r in rows.values() if r.adj_ci_lo is not None} <= {
        f"Bonferroni over {m} groups ({100 * (1 - 0.05 / m):.4g}% each)" for m in (2, 3)}


def test_zero_variance_skill_cannot_pass_the_lower_bound_gate(report_dir):
    s, rows = _by_skill(report_dir)
    flat = rows["semver-bump"].model_copy(update={"lift": 0.5, "sd": 0.0, "ci_lo": None, "ci_hi": None,
                                                 "adj_ci_lo": None, "no_variation": True,
                                                 "ci_note": "no variation observed (n = 4)"})
    others = [r for r in s.by_skill if r.group["skill"] != "semver-bump" or r.outcome != "outcome"]
    failures = gate_failures(s.model_copy(update={"by_skill": [*others, flat]}), threshold=0.2, outcome="outcome",
                             lower_bound=True)
    assert ("FAIL semver-bump: outcome lift +0.500: no variation observed (n = 4); no interval, so its lower "
            "bound cannot be checked against +0.200") in [f.line() for f in failures]


def test_a_skill_without_a_scored_pair_or_ci_fails(report_dir):
    s, rows = _by_skill(report_dir)
    name = "semver-bump"
    empty = rows[name].model_copy(update={"n": 0, "lift": None, "ci_lo": None, "ci_hi": None})
    one = rows[name].model_copy(update={"n": 1, "ci_lo": None, "ci_hi": None, "adj_ci_lo": None, "ci_note": None,
                                        "no_variation": False})
    others = [r for r in s.by_skill if r.group["skill"] != name or r.outcome != "outcome"]
    (f,) = gate_failures(s.model_copy(update={"by_skill": [*others, empty]}), threshold=-1, outcome="outcome")
    assert f.line() == "FAIL semver-bump: no pair scored on both sides for outcome; lift undefined (needs >= -1.000)"
    (f,) = gate_failures(s.model_copy(update={"by_skill": [*others, one]}), threshold=-1, outcome="outcome",
                         lower_bound=True)
    assert f.line().startswith("FAIL semver-bump: outcome lift ") and "has no CI (n=1 pair(s))" in f.line()


def test_exit_codes_through_the_top_level_cli(member, tmp_path, capsys):
    out = str(tmp_path / "r")
    assert aces_main(["report", str(member), "--out", out, "--fail-under-lift", "5"]) == 1
    assert capsys.readouterr().err.count("FAIL ") == 3
    assert aces_main(["report", str(member), "--out", out, "--lower-bound"]) == 2
    assert "--outcome and --lower-bound only apply to the CI gate" in capsys.readouterr().err
    with pytest.raises(ReportError, match="SkillsBench's registry has no skills to gate"):
        main(["--skillsbench", str(tmp_path / "r.json"), "--fail-under-lift", "0"])


def test_help_documents_the_gate(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for s in ("--fail-under-lift X", "--outcome", "--lower-bound", "CI gate for skill changes", "exits 1"):
        assert s in text, s
