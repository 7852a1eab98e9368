"""Timings for the local bubblewrap backend, each printed next to its target.

Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_sandbox.py
Targets: sandbox start + 3 execs + stop < 0.1 s (median); Harbor's per-trial overhead
for an oracle trial (environment setup + agent + verifier phases) about 0.1-0.2 s;
20 oracle trials at n_concurrent=4 < 2 s wall clock (including Job.create).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harbor.job import Job
from harbor.models.job.config import DatasetConfig, JobConfig
from harbor.models.trial.config import AgentConfig, EnvironmentConfig
from support.backends import make_env, write_task

from aces_bench.backends.local import IMPORT_PATH


async def bench_lifecycle(tmp: Path, rounds: int = 15) -> bool:
    times = []
    for i in range(rounds):
        env = make_env(tmp / f"life-{i}", root_parent=None)
        t = time.perf_counter()
        await env.start(force_build=False)
        for command in ("mkdir -p /logs/agent", "echo 42 > /workspace/answer.txt", "cat /workspace/answer.txt"):
            await env.exec(command)
        await env.stop(delete=True)
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    target = 0.1
    print(f"sandbox start + 3 execs + stop: median {med * 1000:6.1f} ms   (target < {target * 1000:.0f} ms)")
    return med < target


async def bench_job(tmp: Path, n_trials: int = 20, n_concurrent: int = 4) -> bool:
    dataset = tmp / "dataset"
    for i in range(n_trials):
        write_task(dataset, f"t{i:02d}", answer="42")
    config = JobConfig(
        job_name="bench",
        jobs_dir=tmp / "jobs",
        n_concurrent_trials=n_concurrent,
        quiet=True,
        agents=[AgentConfig(name="oracle")],
        datasets=[DatasetConfig(path=dataset)],
        environment=EnvironmentConfig(import_path=IMPORT_PATH),
    )
    t = time.perf_counter()
    result = await (await Job.create(config)).run()
    wall = time.perf_counter() - t
    rewards = [r.verifier_result.rewards["reward"] for r in result.trial_results if r.verifier_result]
    per_trial = []
    for r in result.trial_results:
        phases = (r.environment_setup, r.agent_execution, r.verifier)
        per_trial.append(sum((p.finished_at - p.started_at).total_seconds() for p in phases if p))
    med = statistics.median(per_trial)
    print(f"oracle trial phases (env setup + agent + verifier): median {med:5.3f} s   (target about 0.1-0.2 s)")
    print(f"{n_trials} oracle trials at n_concurrent={n_concurrent}: {wall:5.2f} s wall   (target < 2 s)")
    print(f"  rewards: {sum(rewards):.0f}/{n_trials} solved, {n_trials - len(rewards)} without a verifier result")
    return med <= 0.2 and wall < 2.0 and len(rewards) == n_trials and all(x == 1.0 for x in rewards)


async def main() -> int:
    load = os.getloadavg()[0]
    print(f"host: {os.cpu_count()} cores, load average {load:.1f} (timings stretch when load > cores)")
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        ok = await bench_lifecycle(Path(tmp))
        ok &= await bench_job(Path(tmp))
    print("all targets met" if ok else "SOME TARGETS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
