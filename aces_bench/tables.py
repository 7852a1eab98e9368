"""Write and read the tidy trials table (Parquet and CSV, atomically)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from aces_bench.config.spec import RunSpec
from aces_bench.errors import ReportError
from aces_bench.io import write_frame
from aces_bench.table import COLUMNS, TABLE_SCHEMA_VERSION, TrialRow
from aces_bench.versioning import load_model

TABLE_PARQUET = "trials.parquet"
TABLE_CSV = "trials.csv"


def rows_to_frame(rows: list[TrialRow]) -> pd.DataFrame:
    frame = pd.DataFrame([r.model_dump() for r in rows], columns=list(COLUMNS))
    for col in frame.columns:
        if col.startswith("metric_") or col in ("reward", "composite", "cost_usd", "wall_sec", "author_score"):
            frame[col] = frame[col].astype("float64")
    return frame


def write_trials_table(out_dir: Path, graded: list, spec: RunSpec) -> pd.DataFrame:
    rows = [g.to_row(spec) for g in graded]
    frame = rows_to_frame(rows)
    write_frame(out_dir / TABLE_PARQUET, frame)
    write_frame(out_dir / TABLE_CSV, frame)
    return frame


def read_trials_table(results_dir: Path) -> pd.DataFrame:
    """Read a results dir's table; a dir of sweep members is read as their union."""
    results_dir = Path(results_dir)
    direct = results_dir / TABLE_PARQUET
    paths = [direct] if direct.is_file() else sorted(results_dir.glob(f"*/{TABLE_PARQUET}"))
    if not paths:
        raise ReportError(
            f"no {TABLE_PARQUET} here or in its subfolders",
            where=results_dir,
            fix="point at a study output dir (outputs/<study>) or a multirun dir (multirun/<study>)",
        )
    frames = [read_table_file(p) for p in paths]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    missing = [c for c in ("skill", "case_id", "condition", "status") if c not in frame.columns]
    if missing:
        raise ReportError(f"table lacks columns {missing}", where=paths[0], fix="re-run the study with this version")
    return frame


# CSV has no types: text columns are read as text so a run id like "2024" stays a string.
_CSV_TEXT = {name: str for name, f in TrialRow.model_fields.items() if f.annotation in (str, str | None)}


def _cell(value: object) -> object:
    # Parquet and CSV store an unscored metric or an absent label as NaN; the model says None.
    return None if not isinstance(value, (list, tuple, dict)) and pd.isna(value) else value


def validate_rows(frame: pd.DataFrame, where: Path) -> list[TrialRow]:
    """Every row of a stored table as a ``TrialRow`` (migrated); a bad row is a ReportError naming it."""
    fix = "re-grade the study (`aces-bench grade`) or restore the file"
    return [
        load_model(TrialRow, {k: _cell(v) for k, v in record.items()}, where=where, fix=fix, prefix=f"row {i}")
        for i, record in enumerate(frame.to_dict("records"))
    ]


def read_table_file(path: Path) -> pd.DataFrame:
    """One stored trials table (Parquet or CSV, by suffix), checked row by row against ``TrialRow``.

    Rows of an older schema version come back migrated; a newer or unknown version,
    a missing column or a bad value raises a ReportError naming the file and row.
    """
    path = Path(path)
    try:
        frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, dtype=_CSV_TEXT)
    except (OSError, ValueError) as exc:
        raise ReportError(f"cannot read the trials table: {exc}", where=path,
                          fix="re-grade the study (`aces-bench grade`) or restore the file") from None
    rows = validate_rows(frame, path)
    versions = set(frame["schema_version"].astype(str)) if "schema_version" in frame.columns else set()
    if frame.empty or versions == {TABLE_SCHEMA_VERSION}:
        return frame
    return rows_to_frame(rows)  # migrated: rebuilt in the current shape
