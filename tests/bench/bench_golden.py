"""Cost of validating stored artifacts through their models on read (not collected by pytest).

    .venv/bin/python tests/bench/bench_golden.py

Targets: a 10,000-row trials table read and checked row by row in under 1.5 s; 2,000
grades.jsonl lines read through GradedTrial in under 1.5 s.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pandas as pd

from aces_bench.records.trials import read_grades, read_table_file

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        rows = pd.read_parquet(GOLDEN / "trials" / "trials_v1.parquet")
        big = pd.concat([rows] * 5000, ignore_index=True)
        big.to_parquet(Path(tmp) / "trials.parquet", index=False)
        t = time.perf_counter()
        read_table_file(Path(tmp) / "trials.parquet")
        print(f"trials table, {len(big)} rows: {time.perf_counter() - t:.2f} s (target < 1.5 s)")

        lines = (GOLDEN / "grades" / "grades_v1.jsonl").read_text().splitlines()
        (Path(tmp) / "grades.jsonl").write_text("\n".join(lines * 1000) + "\n")
        t = time.perf_counter()
        read_grades(Path(tmp) / "grades.jsonl")
        print(f"grades.jsonl, {len(lines) * 1000} lines: {time.perf_counter() - t:.2f} s (target < 1.5 s)")


if __name__ == "__main__":
    main()
