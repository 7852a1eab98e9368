"""Write and read the tidy trials table (Parquet and CSV, atomically)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from aces_bench.config.spec import RunSpec
from aces_bench.errors import ReportError
from aces_bench.io import write_frame
from aces_bench.table import COLUMNS, TrialRow

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
    frames = [pd.read_parquet(p) for p in paths]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    missing = [c for c in ("skill", "case_id", "condition", "status") if c not in frame.columns]
    if missing:
        raise ReportError(f"table lacks columns {missing}", where=paths[0], fix="re-run the study with this version")
    return frame
