"""Golden study results (trials table, grades, provenance, report summary) through their real readers.

The valid files come from a real offline run (``make_goldens.py``); each refused file
differs from a valid one in one value, and the exact user-facing text is asserted.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from aces_bench import __version__
from aces_bench.core.errors import ReportError
from aces_bench.records.provenance import Provenance
from aces_bench.records.summary import ReportSummary, read_summary
from aces_bench.records.trials import (
    GradedTrial,
    TrialRow,
    grades_by_key,
    read_grades,
    read_table_file,
    table_columns,
    validate_rows,
)
from aces_bench.reports.records import read_provenance

GOLDEN = Path(__file__).resolve().parent


def newer(where: str, artifact: str, readable: str, regenerate: str) -> str:
    return (f"{where}: {artifact} schema_version '9' is newer than this aces-bench ({__version__}) reads "
            f"({readable})\n  fix: upgrade aces-bench to the version that wrote this file, or {regenerate}")


# --- trials table -----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["trials_v1.parquet", "trials_v1.csv"])
def test_trials_v1_reads_as_the_pair_it_stored(name):
    frame = read_table_file(GOLDEN / "trials" / name)
    assert list(frame.columns) == list(table_columns())
    assert sorted(frame["condition"]) == ["baseline", "with_skill"]
    # Read and migrated to version 2 (issue 22: outcome is intention to treat; version 1's
    # outcome is the per-protocol view, its outcome_failed the intention-to-treat one).
    assert set(frame["schema_version"].astype(str)) == {"2"}
    rows = validate_rows(frame, GOLDEN / "trials" / name)
    assert all(isinstance(r, TrialRow) for r in rows)
    raw = pd.read_csv(GOLDEN / "trials" / "trials_v1.csv")
    def column(name):  # this file predates both columns: each reads as unscored
        return [None if pd.isna(v) else v for v in raw[name]] if name in raw else [None] * len(raw)
    assert [r.outcome_per_protocol for r in rows] == column("outcome")
    assert [r.outcome for r in rows] == column("outcome_failed")
    assert all(r.trial_class == "finished" for r in rows if r.status == "ok")
    # Unscored stays unscored: NaN in the file, None in the model, never 0.
    assert rows[0].metric("goal_accuracy") is None or rows[0].metric("goal_accuracy") >= 0


def test_trials_csv_and_parquet_hold_the_same_rows():
    parquet = validate_rows(read_table_file(GOLDEN / "trials" / "trials_v1.parquet"), GOLDEN)
    csv = validate_rows(read_table_file(GOLDEN / "trials" / "trials_v1.csv"), GOLDEN)
    assert parquet == csv


def test_trials_future_version_is_refused_naming_the_row():
    path = GOLDEN / "trials" / "future_version.csv"
    with pytest.raises(ReportError) as err:
        read_table_file(path)
    assert str(err.value) == newer(f"{path}", "row 1: trials table", "1, 2", "re-grade the study (`aces-bench grade`)")


def test_trials_bad_status_is_refused_as_a_dotted_key():
    path = GOLDEN / "trials" / "malformed_status.csv"
    with pytest.raises(ReportError) as err:
        read_table_file(path)
    assert str(err.value) == (
        f"{path}: invalid values:\n"
        "    row 0.status: Input should be 'ok', 'agent_error', 'verifier_error', 'timeout', 'infra_error', "
        "'not_run', 'skipped' or 'setup_error' (got 'exploded')\n"
        "  fix: re-grade the study (`aces-bench grade`) or restore the file"
    )


def test_trial_row_model_refuses_a_newer_version_without_a_reader():
    row = validate_rows(pd.read_csv(GOLDEN / "trials" / "trials_v1.csv"), GOLDEN)[0].model_dump()
    with pytest.raises(ValueError, match="trials table schema_version '3' is newer"):
        TrialRow.model_validate({**row, "schema_version": "3"})


# --- grades.jsonl: one record, read as a list (grading) and by key (report) -------------------


def test_grades_v1_reads_through_both_readers():
    path = GOLDEN / "grades" / "grades_v1.jsonl"
    graded = read_grades(path)
    views = grades_by_key(path)
    assert [g.condition for g in graded] == ["baseline", "with_skill"]
    assert all(isinstance(g, GradedTrial) and g.schema_version == "2" for g in graded)  # migrated from 1
    for g in graded:
        view = views[(g.task_id, g.attempt, g.condition)]
        assert view.metrics == g.metrics and view.composite == g.composite
    # The stored record still makes the trials-table row it made when written.
    table = validate_rows(read_table_file(GOLDEN / "trials" / "trials_v1.csv"), GOLDEN)
    by_task = {r.task_id: r for r in table}
    for g in graded:
        # The version-1 table had no grading_mode column (the grades carried it).
        assert g.to_row().model_dump(exclude={"trial_dir", "grading_mode"}) == \
            by_task[g.task_id].model_dump(exclude={"trial_dir", "grading_mode"})


@pytest.mark.parametrize("reader", [read_grades, grades_by_key])
def test_grades_future_version_is_refused_naming_the_line(reader):
    path = GOLDEN / "grades" / "future_version.jsonl"
    with pytest.raises(ReportError) as err:
        reader(path)
    assert str(err.value) == newer(f"{path}", "line 2: grades", "1, 2", "re-grade the study (`aces-bench grade`)")


@pytest.mark.parametrize("reader", [read_grades, grades_by_key])
def test_grades_bad_value_is_refused_naming_line_and_key(reader):
    path = GOLDEN / "grades" / "malformed_attempt.jsonl"
    with pytest.raises(ReportError) as err:
        reader(path)
    assert str(err.value) == (
        f"{path}: invalid values:\n"
        "    line 2.attempt: Input should be a valid integer, unable to parse string as an integer (got 'second')\n"
        "  fix: re-grade the study (`aces-bench grade`) or restore the file"
    )


# --- provenance.json ----------------------------------------------------------------------


def test_provenance_v1_reads():
    prov, note = read_provenance(GOLDEN / "provenance" / "provenance_v1.json")
    assert note is None and isinstance(prov, Provenance)
    assert prov.schema_version == "1" and list(prov.spec.skill.cases) == ["explicit-1"]
    assert prov.judge_label.startswith("heuristic") and prov.versions["harbor"]


def test_provenance_future_version_is_refused():
    path = GOLDEN / "provenance" / "future_version.json"
    with pytest.raises(ReportError) as err:
        read_provenance(path)
    assert str(err.value) == newer(f"{path}", "provenance", "1", "re-run the study")


def test_provenance_unknown_key_is_refused_as_a_dotted_key():
    path = GOLDEN / "provenance" / "malformed_unknown_key.json"
    with pytest.raises(ReportError) as err:
        read_provenance(path)
    assert str(err.value) == (f"{path}: invalid values:\n    spec.judgee: Extra inputs are not permitted\n"
                              "  fix: restore provenance.json from the run, or re-run the study")


# --- report/summary.json (embeds StudyStats, versioned on its own) -------------------------


def test_summary_v1_reads():
    summary = read_summary(GOLDEN / "summary" / "summary_v1.json")
    assert isinstance(summary, ReportSummary)
    assert summary.schema_version == "1" and summary.stats.schema_version == "1"
    assert summary.pooled and summary.counts.n_trials == 8
    # Written when stats kept a pass threshold of their own: read without it (they count final_pass).
    assert '"pass_threshold": 1.0' in (GOLDEN / "summary" / "summary_v1.json").read_text()
    assert "pass_threshold" not in summary.stats.settings.model_dump()


@pytest.mark.parametrize(("name", "artifact", "regenerate"), [
    ("future_version.json", "report summary", "rebuild the report (`aces-bench report`)"),
    ("future_stats_version.json", "study statistics", "regenerate with `aces-bench report`"),
])
def test_summary_future_versions_are_refused(name, artifact, regenerate):
    path = GOLDEN / "summary" / name
    with pytest.raises(ReportError) as err:
        read_summary(path)
    assert str(err.value) == newer(f"{path}", artifact, "1", regenerate)
