"""Timings for running studies through harnesses and jobs, each printed next to its target.

Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_harness.py
Targets (2 cores):
- terminus-2 pair (with skill + baseline) against the scripted loopback model,
  in-process through the pipeline: < 10 s, of which trials < 5 s.
- Ctrl-C to process exit while trials run: < 5 s (median over a few interrupts).
- Re-running a finished 32-trial demo study (resume, nothing left to run): < 8 s.
"""

from __future__ import annotations

import glob
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-dummy")

from support.model_server import ModelServer
from support.studies import SLOW_SKILL, run_cli, start_cli, study_overrides
from support.terminus_policy import terminus_policy

from aces_bench.config.compose import compose_spec
from aces_bench.study.entry import run_study


def bench_terminus(tmp: Path) -> bool:
    out = tmp / "terminus"
    t = time.perf_counter()
    with ModelServer(terminus_policy, max_requests=16) as server:
        spec = compose_spec(["harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
                             f"model.base_url={server.base_url}", *study_overrides(root_parent=tmp)],
                            output_dir=out)
        run_study(spec)
    total = time.perf_counter() - t
    import pandas as pd

    trials = pd.read_parquet(out / "trials.parquet")["wall_sec"].max()
    print(f"terminus-2 pair through the pipeline: {total:5.1f} s, slowest trial {trials:4.1f} s"
          f"   (target < 10 s, trial < 5 s)")
    return total < 10 and trials < 5


def bench_interrupt(tmp: Path, rounds: int = 3) -> bool:
    times = []
    for i in range(rounds):
        out = tmp / f"interrupt-{i}"
        args = [f"hydra.run.dir={out}", *study_overrides(skill=SLOW_SKILL, cases=("explicit-1", "implicit-1"),
                                                         root_parent=tmp)]
        proc = start_cli(*args)
        while not glob.glob(f"{out}/jobs/*/*/result.json") and proc.poll() is None:
            time.sleep(0.02)
        t = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(f"Ctrl-C to exit with trials running: median {med:4.2f} s, max {max(times):4.2f} s   (target < 5 s)")
    return med < 5


def bench_resume(tmp: Path) -> bool:
    out = tmp / "demo"
    first = run_cli(f"hydra.run.dir={out}", "report=false", f"+backend.kwargs.root_parent={tmp}", timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr
    t = time.perf_counter()
    again = run_cli(f"hydra.run.dir={out}", "report=false", f"+backend.kwargs.root_parent={tmp}", timeout=300)
    took = time.perf_counter() - t
    assert again.returncode == 0, again.stdout + again.stderr
    print(f"re-run of a finished 32-trial demo study (resume): {took:4.1f} s   (target < 8 s)")
    return took < 8


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        ok = [bench_terminus(Path(tmp)), bench_interrupt(Path(tmp)), bench_resume(Path(tmp))]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
