"""Regenerate the study record goldens under tests/golden/study_record/.

    .venv/bin/python tests/golden/make_study_record.py

``old_study/`` is a study folder as aces-bench wrote it before ``study.json``, put together
from the real goldens beside it (provenance, grades, trials table, tasks index, report
summary: each made by make_goldens.py from one offline run). ``migrated_v<N>.json`` is
the record that folder migrates to; ``format_v<N>.json`` is ``StudyRecord``'s format (its
JSON Schema without titles and descriptions), which must change only with a version bump.

Run it when ``StudyRecord.SCHEMA_VERSION`` changes (after adding the migration from the
old version): the files of the old version stay. Not collected by pytest.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "study_record"
OLD_STUDY = OUT / "old_study"

# The old folder's files, each from the golden of its record.
PIECES = {
    "provenance.json": "provenance/provenance_v1.json",
    "tasks.json": "tasks_index/tasks_v1.json",
    "grades.jsonl": "grades/grades_v1.jsonl",
    "trials.parquet": "trials/trials_v1.parquet",
    "trials.csv": "trials/trials_v1.csv",
    "report/summary.json": "summary/summary_v1.json",
}


def record_format(schema: Any) -> Any:
    """A JSON Schema without the words (titles, descriptions): what a reader depends on."""
    if isinstance(schema, dict):
        return {k: record_format(v) for k, v in schema.items() if k not in ("title", "description")}
    if isinstance(schema, list):
        return [record_format(v) for v in schema]
    return schema


def _dump(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    sys.path.insert(0, str(HERE.parents[1]))
    from aces_bench.records.study import StudyRecord, read_study

    for name, source in PIECES.items():
        (OLD_STUDY / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / source, OLD_STUDY / name)
    version = StudyRecord.SCHEMA_VERSION
    _dump(OUT / f"migrated_v{version}.json", read_study(OLD_STUDY).model_dump(mode="json"))
    _dump(OUT / f"format_v{version}.json", record_format(StudyRecord.model_json_schema()))
    print(f"wrote {OLD_STUDY}, migrated_v{version}.json and format_v{version}.json in {OUT}")


if __name__ == "__main__":
    main()
