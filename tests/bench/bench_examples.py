"""Timings of the example skills' scripts on their eval fixtures.

Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_examples.py

Targets: each documented Usage command finishes within 300 ms on its fixture with
the sandbox's python3 (a trial runs one of them; the demo runs dozens of trials on 2
cores), and the whole set within 3 s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from support.examples import run_usage, target_suites

PER_CASE_TARGET_MS = 300
TOTAL_TARGET_S = 3.0
REPEATS = 3


def main() -> int:
    total, worst, ok = 0.0, 0.0, True
    for skill, suite in target_suites():
        for case in suite.evals:
            if case.is_negative_control:
                continue
            timings = []
            for _ in range(REPEATS):
                with tempfile.TemporaryDirectory() as tmp:
                    start = time.perf_counter()
                    proc = run_usage(skill, case, Path(tmp))
                    timings.append((time.perf_counter() - start) * 1000)
                if proc.returncode != 0:
                    print(f"{skill.name}:{case.id} FAILED: {proc.stderr.strip()}")
                    ok = False
            best = min(timings)
            total += best / 1000
            worst = max(worst, best)
            flag = "ok" if best <= PER_CASE_TARGET_MS else "SLOW"
            print(f"{skill.name + ':' + case.id:36} {best:7.1f} ms  (target <= {PER_CASE_TARGET_MS} ms) {flag}")
    print(f"{'all positive cases':36} {total:7.2f} s   (target <= {TOTAL_TARGET_S} s) {'ok' if total <= TOTAL_TARGET_S else 'SLOW'}")
    return 0 if ok and worst <= PER_CASE_TARGET_MS and total <= TOTAL_TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
