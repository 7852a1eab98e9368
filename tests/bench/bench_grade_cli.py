"""Speed target of `aces-bench grade` on a job dir. Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_grade_cli.py

Writes 2,022 Harbor trial dirs (result.json, ATIF trajectory shaped like the ACES
study's, a retained workspace with the answer) into one job dir, plus a case spec
naming each task, then times the whole grade path: discovering and reading the
trials, building subjects, all six metrics (heuristic judge) and self_correction,
composite/dimensions/first-attempt pass, and writing grades.jsonl, the trials table
and the summary. Target: under 20 s on 2 cores (the deterministic part alone has its
own target in bench_grading.py).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from bench_grading import N, one_trajectory
from support.grading import trial_result, write_trial

from aces_bench.grading import cli
from aces_bench.records.trials import read_grades

TARGET_S = 20.0


def build(root: Path) -> tuple[Path, Path]:
    rng = random.Random(11)
    job = root / "jobs" / "bench-job"
    job.mkdir(parents=True)
    cases = []
    for i in range(N):
        traj, skill, cond = one_trajectory(i, rng)
        task = f"task-{i // 2:04d}"
        reward = 1.0 if rng.random() < (0.7 if cond == "with_skill" else 0.4) else 0.0
        write_trial(job / cond, f"{task}__{i:05d}", traj, trial_result(f"bench/{task}", f"{task}__{i:05d}", reward),
                    workspace={"answer.txt": "The reconciled total is 1234.50 EUR.\n", "data/march.csv": "a,b\n1,2\n"})
        if cond == "with_skill":
            cases.append({"id": task, "prompt": "Reconcile data/march.csv.", "expected_skill": skill,
                          "expected_script": "scripts/run.py", "expected_output": "total 1234.50 EUR",
                          "assertions": [{"kind": "number", "value": 1234.5, "tolerance": 0.01}],
                          "expected_behavior": ["runs scripts/run.py"]})
    spec = root / "evals.json"
    spec.write_text(json.dumps({"skill_name": "bench", "evals": cases}))
    return job.parent, spec


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        jobs, spec = build(root)
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            stdout, sys.stdout = sys.stdout, devnull
            try:
                cli.main([str(jobs), "--cases", str(spec), "--out", str(root / "out"), "--workdir", "/workspace"])
            finally:
                sys.stdout = stdout
        grade_s = time.perf_counter() - start
        graded = read_grades(root / "out" / "grades.jsonl")
    assert len(graded) == N
    scored = sum(all(g.metrics[m].scored for m in ("security", "skill_execution", "accuracy")) for g in graded)
    print(f"{N} trials in one job dir (written in {build_s:.1f} s, not part of the target)")
    ok = "ok" if grade_s < TARGET_S else "SLOW"
    print(f"{'aces-bench grade (6 metrics, heuristic judge, outputs written)':<62} {grade_s:7.2f} s   "
          f"target < {TARGET_S:.0f} s   {ok}")
    print(f"throughput: {N / grade_s:,.0f} trials/s; {scored} of {N} with security, skill_execution and accuracy scored")
    return 0 if grade_s < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
