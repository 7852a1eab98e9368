"""Speed targets of the reporting layer. Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_report.py

A synthetic multirun study of 1,020 paired cases (10 skills x 17 cases x 6 attempts
over five sweep members, ATIF trajectories included) is written to a temp dir; then:
statistics with 10,000 bootstrap resamples (target < 2 s), the static scan of the 10
target skill folders for static vs live (target < 1 s) and the full report: summary,
figures, LaTeX and HTML (target < 30 s), on 2 cores.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from support.reports import CASES, SKILLS, make_study

from aces_bench.analysis import build_report
from aces_bench.analysis.static_live import scan_targets
from aces_bench.records.stats import StatsSettings
from aces_bench.reports.records import load_study
from aces_bench.stats import build_pairs, study_stats

SKILL_NAMES = (*SKILLS, *(f"bench-skill-{i}" for i in range(7)))
CASE_LIST = (*CASES, *((f"extra-{i}", "implicit") for i in range(13)))
TARGETS = {"statistics (10,000 resamples)": 2.0, "static scan of 10 target skills": 1.0, "full report": 30.0}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="aces-bench-report-") as tmp:
        t0 = time.perf_counter()
        root = make_study(Path(tmp), skills=SKILL_NAMES, cases=CASE_LIST)
        setup = time.perf_counter() - t0
        study = load_study(root)
        trials = study.trials
        n_pairs = len(build_pairs(trials))
        t0 = time.perf_counter()
        study_stats(trials, settings=StatsSettings(n_resamples=10_000))
        timings = {"statistics (10,000 resamples)": time.perf_counter() - t0}
        scan_targets(study)  # first call pays the scanner's imports, as any report does once
        t0 = time.perf_counter()
        scanned = scan_targets(study)
        timings["static scan of 10 target skills"] = time.perf_counter() - t0
        assert len(scanned.structural) == len(SKILL_NAMES), scanned.skills
        t0 = time.perf_counter()
        index = build_report(root)
        timings["full report"] = time.perf_counter() - t0
        size = sum(p.stat().st_size for p in index.parent.rglob("*") if p.is_file())
    print(f"study: {len(trials)} trials, {n_pairs} paired cases (written in {setup:.1f} s); report {size / 1e6:.1f} MB")
    failed = False
    for name, seconds in timings.items():
        target = TARGETS[name]
        ok = seconds < target
        failed |= not ok
        print(f"  {name:<34} {seconds:6.2f} s   target < {target:.0f} s   {'ok' if ok else 'MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
