"""Fast feedback for a skill author (issue 36). Run: PYTHONPATH=tests .venv/bin/python tests/bench/bench_feedback.py

- ``aces-bench report`` on the demo study: CPU seconds of the whole command (imports
  included), target <= 3 s, with the figure cache (~/.cache/aces-bench/figures) as the
  study left it: the study's own report build stored its statistics and figures there,
  so this is what a user's first ``aces-bench report`` after the study meets. The same
  command with ``ACES_FIGURE_CACHE=off`` (everything computed and drawn) is printed beside
  it, without a target;
- a ``model.base_url`` nothing answers: named, with its URL, target < 10 s, nothing written;
- a cost cap the with-skill trials alone pass: refused, target < 5 s, no task folder written.

The demo study is run once first (reference agent, local sandbox; about a minute on 2 cores).
"""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"report CPU on the demo study": 3.0, "dead model endpoint named": 10.0,
           "cost-cap refusal before any task": 5.0}


def _cli(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run aces-bench; return the process, its wall seconds and its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "aces_bench.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                               **(env or {})}, timeout=900, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="aces-bench-feedback-") as tmp:
        demo = Path(tmp) / "demo"
        proc, _, _ = _cli("study=demo", f"hydra.run.dir={demo}", f"+backend.kwargs.root_parent={tmp}")
        assert proc.returncode == 0, proc.stderr[-2000:]
        proc, _, cpu = _cli("report", str(demo))
        assert proc.returncode == 0, proc.stderr[-2000:]
        timings["report CPU on the demo study"] = cpu
        proc, _, cold = _cli("report", str(demo), env={"ACES_FIGURE_CACHE": "off"})
        assert proc.returncode == 0, proc.stderr[-2000:]

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        out = Path(tmp) / "dead"
        proc, wall, _ = _cli("harness=terminus-2", "model=openai-compatible", "model.name=openai/a",
                             f"model.base_url={url}", f"hydra.run.dir={out}", env={"OPENAI_API_KEY": "sk-bench"})
        assert proc.returncode == 2 and url in proc.stderr and not (out / "tasks").exists(), proc.stderr[-2000:]
        timings["dead model endpoint named"] = wall

        out = Path(tmp) / "capped"
        proc, wall, _ = _cli("harness=terminus-2", "model=gpt-4o", "study.max_cost_usd=0.0001",
                             f"hydra.run.dir={out}", env={"OPENAI_API_KEY": "sk-bench"})
        assert proc.returncode == 2 and "study.max_cost_usd" in proc.stderr, proc.stderr[-2000:]
        assert not (out / "tasks").exists()
        timings["cost-cap refusal before any task"] = wall
    failed = False
    for name, seconds in timings.items():
        target = TARGETS[name]
        ok = seconds <= target
        failed |= not ok
        unit = "s CPU" if "CPU" in name else "s"
        print(f"  {name:<34} {seconds:6.2f} {unit:<5}  target <= {target:.0f} s   {'ok' if ok else 'MISSED'}")
        if name == "report CPU on the demo study":
            print(f"  {'  the same, figure cache off':<34} {cold:6.2f} s CPU  (no target)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
