"""Golden study record: a study folder written before study.json migrates to the stored
record, and StudyRecord's format cannot change without a version bump and a migration."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import aces_bench
from aces_bench.records.study import STUDY_FILE, StudyRecord, read_study

GOLDEN = Path(__file__).resolve().parent / "study_record"
OLD_STUDY = GOLDEN / "old_study"
REGENERATE = "`.venv/bin/python tests/golden/make_study_record.py`"


def _format_of_record() -> dict:
    from make_study_record import record_format  # beside this file, on the path pytest gives it

    return record_format(StudyRecord.model_json_schema())


def test_the_format_of_study_json_changes_only_with_its_version():
    version = StudyRecord.SCHEMA_VERSION
    stored = GOLDEN / f"format_v{version}.json"
    assert stored.is_file(), (f"no golden format for study record version {version}: add the migration from the "
                              f"previous version to StudyRecord.SCHEMA_MIGRATIONS, then run {REGENERATE}")
    assert _format_of_record() == json.loads(stored.read_text()), (
        f"StudyRecord's format changed but SCHEMA_VERSION is still {version!r}: bump SCHEMA_VERSION, add a "
        f"migration from {version!r} to SCHEMA_MIGRATIONS (old study.json files must still load), then run "
        f"{REGENERATE} (it keeps format_v{version}.json and writes the new version's)")


def test_an_old_study_folder_migrates_to_the_golden_record():
    migrated = read_study(OLD_STUDY)
    golden = json.loads((GOLDEN / f"migrated_v{StudyRecord.SCHEMA_VERSION}.json").read_text())
    assert migrated.model_dump(mode="json") == golden, f"the migration of old_study changed: if meant, run {REGENERATE}"
    assert [p.name for p in migrated.parts] == ["plan", "provenance", "grades", "trials", "trials_csv", "statistics"]
    assert migrated.created_at == json.loads((OLD_STUDY / "provenance.json").read_text())["created_at"]
    assert not (OLD_STUDY / STUDY_FILE).exists()  # reading writes nothing


def test_an_old_study_folder_loads_through_its_migrated_record(tmp_path):
    frame = aces_bench.load(OLD_STUDY)
    assert sorted(frame["condition"]) == ["baseline", "with_skill"]
    assert set(frame["member"]) == {"old_study"} and set(frame["arm"]) == {"primary"}
    # The same folder with the migrated record stored as its study.json loads the same.
    study = shutil.copytree(OLD_STUDY, tmp_path / "old_study")
    shutil.copyfile(GOLDEN / "migrated_v1.json", study / STUDY_FILE)
    assert aces_bench.load(study).equals(frame)
