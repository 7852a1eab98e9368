"""Baseline reuse end to end (reference agent, local sandbox): a second study of the same
cases runs no baseline trial, says so in the console, reuse.json and the report; a change
to the target skill reruns only its with-skill trials; ``+study.reuse_baseline=false``
and a changed case run them again; a tampered store entry is never used."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.run.reuse import REUSE_FILE, STORE_ENV, _copy_plain, current_plan, read_entry
from aces_bench.study.entry import run_study

ROOT = Path(__file__).resolve().parents[2]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"


def _study(tmp_path: Path, skill: Path, name: str, *extra: str) -> tuple[Path, pd.DataFrame]:
    out = tmp_path / name
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "report=true",
                         f"+backend.kwargs.root_parent={tmp_path}", *extra], output_dir=out)
    run_study(spec)
    return out, pd.read_parquet(out / "trials.parquet")


def _ran(out: Path) -> set[str]:
    """Conditions of the trials Harbor ran in this study (not the reused ones)."""
    names = set()
    for job in (out / "jobs").iterdir():
        if job.name == "reused":
            continue
        for trial in job.iterdir():
            if (trial / "result.json").is_file():
                names.add(trial.name)
    return names


@pytest.mark.sandbox
def test_a_second_study_reuses_every_baseline_and_a_skill_change_reruns_only_with_skill(tmp_path, capfd):
    skill = tmp_path / "skills" / "csv-column-sum"
    shutil.copytree(SKILL, skill)
    first, t1 = _study(tmp_path, skill, "first")
    assert current_plan(first).reused == []
    assert set(t1["status"]) == {"ok"}

    # The skill changes (one line of SKILL.md): its with-skill trials run again, no baseline does.
    md = skill / "SKILL.md"
    md.write_text(md.read_text() + "\nOne more line of advice.\n")
    second, t2 = _study(tmp_path, skill, "second")
    plan = current_plan(second)
    assert len(plan.reused) == plan.candidates == 2  # two cases' baseline trials, one attempt
    assert "baseline reuse: 2 of 2 baseline/null trial(s) from the store" in capfd.readouterr().err
    assert len(_ran(second)) == 2
    assert set(t2.loc[~t2["trial_dir"].str.contains("/jobs/reused/"), "condition"]) == {"with_skill"}
    base = t2.loc[t2["condition"] == "baseline"]
    assert base["trial_dir"].str.contains("/jobs/reused/").all()
    assert (base.set_index("case_id")["reward"] == t1.loc[t1["condition"] == "baseline"].set_index("case_id")[
        "reward"]).all()
    summary = json.loads((second / "report" / "summary.json").read_text())
    assert summary["baseline_reuse"][0]["reused"] == 2
    assert "2 of 2 baseline/null trial(s) from the store" in (second / "report" / "index.html").read_text()

    # Turned off: every baseline runs.
    third, _ = _study(tmp_path, skill, "third", "+study.reuse_baseline=false")
    assert current_plan(third).reused == [] and not current_plan(third).enabled
    assert len(_ran(third)) == 4

    # A changed case file: nothing of the old baseline matches.
    csv = skill / "evals" / "files" / "sales.csv"
    csv.write_text(csv.read_text() + "\n")
    fourth, _ = _study(tmp_path, skill, "fourth")
    assert current_plan(fourth).reused == [] and len(_ran(fourth)) == 4


@pytest.mark.sandbox
def test_a_resumed_study_keeps_its_reuse_plan_and_a_tampered_entry_is_refused(tmp_path):
    skill = tmp_path / "skills" / "csv-column-sum"
    shutil.copytree(SKILL, skill)
    _study(tmp_path, skill, "first")
    store = Path(os.environ[STORE_ENV])
    entries = sorted(store.rglob("entry.json"))
    assert len(entries) == 2
    # A planted entry: another key's trial under this key, or a trial whose result is gone.
    bad = json.loads(entries[0].read_text())
    bad["key"] = "0" * 64
    entries[0].write_text(json.dumps(bad))
    (entries[1].parent / "trial" / "result.json").unlink()
    assert read_entry(store, entries[0].parent.name) is None and read_entry(store, entries[1].parent.name) is None
    second, _ = _study(tmp_path, skill, "second")
    assert current_plan(second).reused == []
    plans = json.loads((second / REUSE_FILE).read_text())
    # Re-running the same command resumes with the plan it recorded (nothing re-decided).
    _study(tmp_path, skill, "second")
    assert json.loads((second / REUSE_FILE).read_text()) == plans


def test_only_regular_files_are_copied_out_of_the_store(tmp_path):
    src = tmp_path / "trial"
    (src / "agent").mkdir(parents=True)
    (src / "result.json").write_text("{}")
    (src / "agent" / "trajectory.json").write_text("{}")
    os.symlink("/etc/passwd", src / "agent" / "leak")
    os.symlink("/etc", src / "etc-dir")
    os.mkfifo(src / "fifo")
    n = _copy_plain(src, tmp_path / "copy")
    assert n == 2
    assert sorted(str(p.relative_to(tmp_path / "copy")) for p in (tmp_path / "copy").rglob("*")) == [
        "agent", "agent/trajectory.json", "result.json"]
