"""docs/data.md documents every column of the trials table and every key of summary.json."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel

from aces_bench.records.stats import StatsSettings, StudyStats
from aces_bench.records.summary import ArmRow, ControlRow, PassRateRow, ReportSummary
from aces_bench.records.trials import study_table_columns
from aces_bench.reports.paper import SideBySide

DOC = Path(__file__).resolve().parents[2] / "docs" / "data.md"


def _keys(model: type[BaseModel], seen: set[type] | None = None) -> set[str]:
    """Every field name of ``model`` and of the models it holds (recursively)."""
    seen = seen if seen is not None else set()
    if model in seen:
        return set()
    seen.add(model)
    out = set(model.model_fields)
    for f in model.model_fields.values():
        for arg in _models(f.annotation):
            out |= _keys(arg, seen)
    return out


def _models(annotation) -> list[type[BaseModel]]:
    args = getattr(annotation, "__args__", ()) or ()
    found = [annotation] if isinstance(annotation, type) and issubclass(annotation, BaseModel) else []
    for a in args:
        found += _models(a)
    return found


def _documented() -> set[str]:
    return set(re.findall(r"`([a-z_0-9]+)`", DOC.read_text()))


def test_every_trials_column_is_documented():
    missing = [c for c in study_table_columns() if c not in _documented()]
    assert not missing, f"docs/data.md lacks the columns {missing}"


def test_every_summary_key_is_documented():
    keys = _keys(ReportSummary) | _keys(ArmRow) | _keys(ControlRow) | _keys(PassRateRow) | _keys(StatsSettings)
    keys |= set(StudyStats.model_fields) | set(SideBySide.model_fields)
    missing = sorted(k for k in keys if k not in _documented() and k not in ("columns", "rows"))
    assert not missing, f"docs/data.md lacks the summary.json keys {missing}"
