"""Throughput of the offline judged path: heuristic grading and prompt building.

Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_judges.py
Target: all three judged metrics with the heuristic judge over 2,000 realistic
trajectories (~7 steps each, like the ACES study's 14,335 steps over 2,022) in under
5 s on 2 cores; it makes no network call, so it bounds the offline default's cost.
"""

from __future__ import annotations

import asyncio
import time

from support.judges import INVOICE_CASE, bash, grading_input, trajectory

from aces_bench.graders.judge_context import trial_sections
from aces_bench.graders.judged import grade_judged
from aces_bench.judges.heuristic import HeuristicJudge

N = 2000
TARGET_S = 5.0


def synthetic(i: int):
    out = "row,amount\n" + "\n".join(f"{j},{j * 3.5}" for j in range(40))
    return trajectory(
        INVOICE_CASE.prompt,
        (
            "Reading the skill.",
            [
                bash(
                    "cat /skills/invoice-reconciler/SKILL.md",
                    "---\nname: x\n---\n" + "doc " * 300,
                )
            ],
        ),
        ("Looking at data.", [bash("head -n 40 data/march.csv", out)]),
        (
            "Running.",
            [
                bash(
                    f"python3 scripts/reconcile.py data/march.csv --run {i}",
                    "unmatched total: 1234.50",
                )
            ],
        ),
        ("Checking.", [bash("cat answer.txt", "1234.50")]),
        ("Writing.", [bash("echo 1234.50 > answer.txt", "")]),
        (f"The total unmatched amount is {1234.50 if i % 2 else 99}.", None),
    )


async def main() -> None:
    inputs = [grading_input(synthetic(i)) for i in range(N)]
    steps = sum(len(inp.trajectory.steps) for inp in inputs)
    t0 = time.perf_counter()
    for inp in inputs[:500]:
        trial_sections(inp)
    t_prompt = (time.perf_counter() - t0) / 500 * N
    judge = HeuristicJudge()
    t0 = time.perf_counter()
    results = [await grade_judged(inp, judge) for inp in inputs]
    elapsed = time.perf_counter() - t0
    scored = sum(r["accuracy"].scored for r in results)
    print(f"{N} trajectories, {steps} steps; accuracy scored on {scored}")
    print(f"prompt building (trial sections)  {t_prompt:6.2f} s est. for {N}")
    print(
        f"heuristic grade_judged (3 metrics) {elapsed:6.2f} s   target < {TARGET_S:.0f} s  "
        f"{'OK' if elapsed < TARGET_S else 'MISSED'}"
    )


if __name__ == "__main__":
    asyncio.run(main())
