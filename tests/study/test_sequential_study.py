"""Sequential studies end to end (reference agent, local sandbox): the known-effect skills
get the fixed design's verdicts with fewer trials; a study killed between rounds and
re-run makes the same decisions; study.max_trials stops starting rounds; unrun trials
are recorded as skipped; the report and its gate read the sequential decisions."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pandas as pd
import pytest
from support.sequential_live import SKILLS, compare_designs, overrides

from aces_bench.analysis.cli import main as report_main
from aces_bench.config.compose import compose_spec
from aces_bench.records.sequential import LEDGER, Ledger
from aces_bench.study.entry import run_study

pytestmark = pytest.mark.sandbox


def _ledger(out: Path) -> Ledger:
    return Ledger.model_validate_json((out / LEDGER).read_text())


def test_known_effect_skills_get_the_fixed_verdicts_with_fewer_trials(tmp_path):
    lines, ok = compare_designs(tmp_path / "live", n_attempts=2)
    assert ok, "\n".join(lines)
    assert "verdicts agree" in lines[-1]


def _spec(tmp_path: Path, out: Path, *extra: str):
    return compose_spec([*overrides(tmp_path, 2, 0.05, 0.05), "study.sequential=true",
                         f"skill.paths=[{SKILLS[0]},{SKILLS[2]}]", *extra], output_dir=out)


def test_a_study_killed_between_rounds_resumes_to_the_same_decisions(tmp_path, monkeypatch):
    from aces_bench.grading.grade import StudyGrader  # the study's one round loop grades each round with it

    whole = tmp_path / "whole"
    run_study(_spec(tmp_path, whole))
    reference = _ledger(whole)

    killed = tmp_path / "killed"
    real = StudyGrader.grade
    calls = {"n": 0}

    async def dies_in_round_two(self, records):
        calls["n"] += 1
        if calls["n"] == 2:  # the second round's trials ran; the process dies before grading them
            raise KeyboardInterrupt
        return await real(self, records)

    monkeypatch.setattr(StudyGrader, "grade", dies_in_round_two)
    with pytest.raises(KeyboardInterrupt):
        run_study(_spec(tmp_path, killed))
    assert _ledger(killed).rounds_done == 1
    monkeypatch.setattr(StudyGrader, "grade", real)
    run_study(_spec(tmp_path, killed))
    resumed = _ledger(killed)
    for name, sp in reference.skills.items():
        got = resumed.skills[name]
        assert [(lk.decision, lk.estimate, lk.p_value) for lk in got.looks] == \
            [(lk.decision, lk.estimate, lk.p_value) for lk in sp.looks]
    assert resumed.trials_run == reference.trials_run
    # No trial of the round that was cut short ran twice: one trial dir per (task, attempt).
    trials = pd.read_parquet(killed / "trials.parquet")
    ran = trials.loc[trials["status"] != "skipped"]
    assert len(ran) == reference.trials_run
    job_trials = [p for job in (killed / "jobs").iterdir() for p in job.iterdir() if (p / "result.json").is_file()]
    assert len(job_trials) == reference.trials_run


def test_max_trials_stops_starting_rounds_and_unrun_trials_are_skipped(tmp_path):
    out = tmp_path / "capped"
    run_study(_spec(tmp_path, out, "study.max_trials=30", "report=true"))
    ledger = _ledger(out)
    assert ledger.trials_run <= 30 and ledger.stop_note and "study.max_trials=30" in ledger.stop_note
    trials = pd.read_parquet(out / "trials.parquet")
    skipped = trials.loc[trials["status"] == "skipped"]
    assert len(skipped) == len(trials) - ledger.trials_run
    assert skipped["failure_cause"].str.startswith("sequential: ").all()
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert {r["skill"] for r in summary["sequential"]} == {"ledger-verifier", "quick-line-count"}
    assert "Sequential gate" in (out / "report" / "index.html").read_text()
    buf = io.StringIO()
    with redirect_stdout(buf), redirect_stderr(buf):
        rc = report_main([str(out), "--fail-under-lift", "0.05"])
    assert rc == 1 and "(sequential gate)" in buf.getvalue()


def test_a_resumed_study_refuses_a_changed_design(tmp_path):
    from aces_bench.core.errors import RunError

    out = tmp_path / "study"
    run_study(_spec(tmp_path, out, "study.max_trials=12"))
    with pytest.raises(RunError, match="another design or case order"):
        run_study(_spec(tmp_path, out, "study.max_trials=12", "study.gate.threshold=0.1"))
    # A ledger written before a design setting existed (here: the conditional-power futility
    # rule) is not resumed under today's default for it: its stopping rule would change.
    raw = json.loads((out / LEDGER).read_text())
    for sp in raw["skills"].values():
        if sp.get("design"):
            sp["design"].pop("futility_power")
    (out / LEDGER).write_text(json.dumps(raw))
    with pytest.raises(RunError, match="written without futility_power"):
        run_study(_spec(tmp_path, out, "study.max_trials=12"))


def test_the_sequential_report_never_contradicts_itself(tmp_path):
    # The known-effect suite, 3 attempts, threshold 0 (issue 33, item 7, found on this study):
    # "helps" was printed beside [-0.225, +1.000], "harms" beside [-1.000, +0.225], and the
    # trials the design never ran were "excluded ( trial(s))" with worst-case bounds.
    from support.page_checks import page_defects

    out = tmp_path / "page"
    run_study(compose_spec([*overrides(tmp_path, 3, 0.0, 0.05), "study.sequential=true", "report=true"],
                           output_dir=out))
    assert not page_defects((out / "report" / "index.html").read_text())
    summary = json.loads((out / "report" / "summary.json").read_text())
    itt = summary["intention_to_treat"]
    assert itt["n_analysed"] <= itt["n_pair_keys"] and itt["n_excluded"] == 0 and itt["n_not_run_by_design"] > 0
    assert itt["lift_worst_case"] == pytest.approx(itt["lift"])  # no bound drawn over trials never meant to run
    rows = {r["skill"]: r for r in summary["sequential"]}
    helps = rows["ledger-verifier"]
    assert helps["decision"] == "helps" and helps["decided_lo"] > 0.0 and helps["decided_text"].startswith("anytime-valid")
    harms = rows["quick-line-count"]
    assert harms["decision"] == "harms" and (harms["looks"] == harms["planned_looks"] or harms["decided_hi"] < 0)
