"""Timings of the dataset layer against their targets (not collected by pytest).

    .venv/bin/python tests/bench/bench_datasets.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path

from aces_bench.cases import load_suite, write_suite
from aces_bench.datasets.create import create_dataset

GOLDEN = Path(__file__).resolve().parents[1] / "datasets" / "golden"


def _timed(label: str, target: float, fn, repeat: int = 1) -> None:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    per = (time.perf_counter() - start) / repeat
    print(f"{label:<58} {per * 1000:9.1f} ms   target < {target * 1000:.0f} ms   {'ok' if per < target else 'SLOW'}")


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        skill = tmp / "skill"
        shutil.copytree(GOLDEN / "skill", skill)
        cases = [{"id": f"c{i}", "prompt": f"Total the amount column, variant {i}.", "files": ["evals/files/sales.csv"],
                  "assertions": [{"kind": "number", "value": 141.75}, "names the total"]} for i in range(1000)]
        (skill / "evals" / "evals.json").write_text(json.dumps({"evals": cases}))
        _timed("load_suite: 1,000 cases with fixtures", 0.1, lambda: load_suite(skill, "csv-stats"), 5)
        suite = load_suite(skill, "csv-stats")
        _timed("write_suite: 1,000 cases, canonical JSON", 0.1, lambda: write_suite(tmp / "out.json", suite), 5)
        fresh = tmp / "fresh"
        shutil.copytree(GOLDEN / "skill", fresh)
        shutil.copyfile(GOLDEN / "valid" / "EVAL.md", fresh / "EVAL.md")
        # The first call is what a user's first ``dataset create`` costs past the interpreter's start (the lazy
        # imports, the sandbox's first start); the repeats rerun it on the skill it has written, nothing cached.
        _timed("dataset create: EVAL.md + 8 template buckets, first run", 0.1, lambda: create_dataset(fresh))
        _timed("dataset create: the same, mean of 5 more", 0.1, lambda: create_dataset(fresh), 5)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
