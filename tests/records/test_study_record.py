"""study.json: the one writer records a part, the one reader checks every part on disk,
and a damaged, newer or hostile record is a one-line error naming the part, file and fix."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import aces_bench
from aces_bench import __version__
from aces_bench.core.errors import ReportError
from aces_bench.records.study import (
    KINDS,
    RERUN,
    STAGE_FIX,
    STUDY_FILE,
    StudyRecord,
    part_name,
    read_study,
    record_graded,
)

OLD_STUDY = Path(__file__).resolve().parents[1] / "golden" / "study_record" / "old_study"
REPLACE = f"remove study.json and {RERUN}"


@pytest.fixture
def study(tmp_path) -> Path:
    """The golden old study, re-graded by today's writer: it now has a study.json."""
    folder = shutil.copytree(OLD_STUDY, tmp_path / "demo")
    record_graded(folder)
    return folder


def _refused(folder: Path, **kwargs) -> str:
    with pytest.raises(ReportError) as err:
        read_study(folder, **kwargs)
    return str(err.value)


def test_the_writer_records_the_part_and_keeps_the_folders_other_files(study):
    record = read_study(study)
    assert [p.name for p in record.parts] == ["plan", "provenance", "statistics", "grades", "trials", "trials_csv"]
    grades = record.part("grades")
    assert (grades.file, grades.artifact, grades.schema_version, grades.stage) == ("grades.jsonl", "grades", "2",
                                                                                    "grade")
    assert grades.written_at is not None and record.part("plan").written_at is None  # migrated, not re-written
    assert record.study == "demo" and record.aces_bench_version == "0.1.0"
    assert json.loads((study / STUDY_FILE).read_text()) == record.model_dump(mode="json")


def test_a_changed_part_names_the_part_the_file_and_the_stage_to_rerun(study):
    with open(study / "grades.jsonl", "a") as fh:
        fh.write("\n")
    message = _refused(study)
    assert message.startswith(f"{study / STUDY_FILE}: part 'grades' (grades.jsonl) has changed since the grade "
                              "stage recorded it (sha256 ")
    assert message.endswith(f"now): it no longer belongs to this study\n  fix: {STAGE_FIX['grade']}")
    # Only the parts asked for are checked: load reads the trials table, which is intact.
    assert len(aces_bench.load(study)) == 2


def test_a_missing_part_is_refused(study):
    (study / "report" / "summary.json").unlink()
    assert _refused(study) == (f"{study / STUDY_FILE}: part 'statistics' (report/summary.json) is missing (the "
                               f"report stage wrote it)\n  fix: {STAGE_FIX['report']}")


def test_a_part_replaced_by_a_symlink_is_refused(study, tmp_path):
    elsewhere = tmp_path / "elsewhere.parquet"
    shutil.copyfile(study / "trials.parquet", elsewhere)  # the same bytes: the hash would match
    (study / "trials.parquet").unlink()
    (study / "trials.parquet").symlink_to(elsewhere)
    expected = (f"{study / STUDY_FILE}: part 'trials' (trials.parquet) is a symbolic link, not a regular file\n"
                f"  fix: remove it and {STAGE_FIX['grade']}")
    assert _refused(study) == expected
    with pytest.raises(ReportError) as err:
        aces_bench.load(study)
    assert str(err.value) == expected


def test_a_part_in_a_folder_linked_out_of_the_study_is_refused(study, tmp_path):
    shutil.move(study / "report", tmp_path / "report")
    (study / "report").symlink_to(tmp_path / "report")
    assert _refused(study) == (f"{study / STUDY_FILE}: part 'statistics' (report/summary.json) lies outside the "
                               f"study folder (through a symbolic link)\n  fix: remove it and {STAGE_FIX['report']}")


def test_a_part_replaced_by_a_fifo_is_refused_without_blocking(study):
    (study / "trials.csv").unlink()
    os.mkfifo(study / "trials.csv")  # nobody writes to it: opening it to read would wait forever
    assert _refused(study) == (f"{study / STUDY_FILE}: part 'trials_csv' (trials.csv) is a FIFO, not a regular "
                               f"file\n  fix: remove it and {STAGE_FIX['grade']}")


def test_an_old_folder_with_a_fifo_is_refused_too(tmp_path):
    folder = shutil.copytree(OLD_STUDY, tmp_path / "old")
    (folder / "grades.jsonl").unlink()
    os.mkfifo(folder / "grades.jsonl")
    assert _refused(folder) == (f"{folder / STUDY_FILE}: part 'grades' (grades.jsonl) is a FIFO, not a regular "
                                f"file\n  fix: remove it and {RERUN}")


def _rewrite(folder: Path, change) -> None:
    data = json.loads((folder / STUDY_FILE).read_text())
    change(data)
    (folder / STUDY_FILE).write_text(json.dumps(data))


def test_a_record_from_a_newer_aces_bench_is_refused(study):
    _rewrite(study, lambda d: d.update(schema_version="9"))
    assert _refused(study) == (
        f"{study / STUDY_FILE}: study record schema_version '9' is newer than this aces-bench ({__version__}) "
        f"reads (0, 1)\n  fix: upgrade aces-bench to the version that wrote this file, or {RERUN}")


def test_a_record_naming_a_file_outside_the_study_is_refused(study):
    _rewrite(study, lambda d: d["parts"][0].update(file="../../etc/passwd"))
    assert _refused(study) == (
        f"{study / STUDY_FILE}: invalid values:\n"
        "    parts[0].file: '../../etc/passwd' is not a path inside the study folder "
        "(got '../../etc/passwd')\n"
        f"  fix: {REPLACE}")
    _rewrite(study, lambda d: d["parts"][0].update(file="/etc/passwd"))
    assert "parts[0].file: '/etc/passwd' is not a path inside the study folder" in _refused(study)


def test_a_truncated_record_is_refused(study):
    text = (study / STUDY_FILE).read_text()
    (study / STUDY_FILE).write_text(text[: len(text) // 2])
    message = _refused(study)
    assert message.startswith(f"{study / STUDY_FILE}: the study record is not JSON (cut short or damaged): ")
    assert message.endswith(f"\n  fix: {REPLACE}")


def test_a_record_that_is_a_symlink_is_refused(study, tmp_path):
    shutil.move(study / STUDY_FILE, tmp_path / STUDY_FILE)
    (study / STUDY_FILE).symlink_to(tmp_path / STUDY_FILE)
    assert _refused(study) == (f"{study / STUDY_FILE}: the study record is a symbolic link, not a regular file\n"
                               f"  fix: {REPLACE}")


def test_every_kind_of_part_is_named_as_its_writer_names_its_artifact():
    from aces_bench.emitters.emit import EmittedTask
    from aces_bench.records.provenance import Provenance
    from aces_bench.records.sequential import Ledger
    from aces_bench.records.study import ResolvedSpec
    from aces_bench.records.summary import ReportSummary
    from aces_bench.records.trials import GradedTrial, StudyTrialRow, TrialRow
    from aces_bench.run.cost import SpendEntry
    from aces_bench.run.reuse import ReusePlan
    from aces_bench.study.design import DesignSize

    writers = {"spec": ResolvedSpec, "plan": EmittedTask, "reuse": ReusePlan, "provenance": Provenance,
               "cost": SpendEntry, "sequential": Ledger, "round": GradedTrial, "grades": GradedTrial,
               "trials": TrialRow, "trials_csv": TrialRow, "statistics": ReportSummary, "design": DesignSize,
               "member": StudyRecord}
    assert {k: kind.artifact for k, kind in KINDS.items()} == {k: w.SCHEMA_ARTIFACT for k, w in writers.items()}
    from aces_bench.records.study import DESIGN_TABLE_ARTIFACT

    assert DESIGN_TABLE_ARTIFACT == StudyTrialRow.SCHEMA_ARTIFACT


@pytest.mark.parametrize(("file", "name"), [
    ("sequential/round-3.jsonl", "round:3"), ("reference-group/study.json", "member:reference-group"),
    ("report/summary.json", "statistics"), ("trials.csv", "trials_csv"),
])
def test_a_file_is_named_as_its_part(file, name):
    assert part_name(file) == name
    kind, _, key = name.partition(":")
    assert KINDS[kind].file.format(key) == file


def test_the_sequential_round_files_are_where_the_sequential_study_writes_them():
    from aces_bench.study.sequential import ROUNDS_DIR

    assert KINDS["round"].file.format(0) == f"{ROUNDS_DIR}/round-0.jsonl"


def test_an_old_design_root_and_sequential_rounds_migrate_as_their_writers_named_them(tmp_path):
    folder = tmp_path / "design"
    (folder / "sequential").mkdir(parents=True)
    shutil.copyfile(OLD_STUDY / "trials.parquet", folder / "trials.parquet")
    shutil.copyfile(OLD_STUDY / "grades.jsonl", folder / "sequential" / "round-0.jsonl")
    (folder / "sequential" / "notes.txt").write_text("not a part")
    (folder / "design.json").write_text(json.dumps({"members": []}))
    parts = {p.name: (p.file, p.artifact, p.stage, p.schema_version) for p in read_study(folder).parts}
    assert parts == {
        "trials": ("trials.parquet", "study trials table", "design", "1"),
        "design": ("design.json", "study design", "design", "1"),
        "round:0": ("sequential/round-0.jsonl", "grades", "sequential", "1"),
    }


def test_a_report_rebuilt_over_the_study_re_records_its_statistics_and_one_elsewhere_does_not(study, tmp_path):
    # `aces-bench report DIR` rewrites report/summary.json: left unrecorded, the next
    # read_study would refuse the statistics part as changed.
    from aces_bench.analysis import build_report

    before = read_study(study).part("statistics")
    build_report(study, static=False)
    after = read_study(study).part("statistics")
    assert after.stage == "report" and after.written_at is not None and after.sha256 != before.sha256
    elsewhere = tmp_path / "elsewhere"
    build_report(study, out_dir=elsewhere, static=False)
    assert read_study(study).part("statistics") == after  # --out writes no part of the study
    assert not (elsewhere / STUDY_FILE).exists()


def test_the_report_writes_its_statistics_where_the_record_looks_for_them():
    # The other writers take their file names from KINDS; the report's folder and file are its own.
    from aces_bench.reports.build import REPORT_DIR, SUMMARY_FILE

    assert KINDS["statistics"].file == f"{REPORT_DIR}/{SUMMARY_FILE}"
