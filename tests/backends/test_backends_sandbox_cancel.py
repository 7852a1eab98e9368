"""Ctrl-C while a trial's sandbox is starting: the cancelled start must leave nothing.

Harbor cancels every running trial on Ctrl-C; a trial that was just starting its
sandbox is cancelled inside ``LocalSandboxEnvironment.start``. Found by the resume
test: cancelling bubblewrap's spawn killed bwrap alone, its sandbox init lived on
holding bwrap's stdout, and the interrupted run hung for ever.
"""

from __future__ import annotations

import asyncio
import threading
import time

from harbor.models.task.config import EnvironmentConfig as TaskEnvConfig
from harbor.models.trial.paths import TrialPaths
from support.studies import needs_bwrap, wait_until_gone

from aces_bench.backends.local import LocalSandboxEnvironment

DOCKERFILE = "FROM python:3.12-slim\nWORKDIR /workspace\nCOPY workspace/ /workspace/\n"


def _environment(tmp_path, i: int) -> LocalSandboxEnvironment:
    env_dir = tmp_path / f"task-{i}" / "environment"
    (env_dir / "workspace").mkdir(parents=True)
    (env_dir / "workspace" / "input.txt").write_text("x\n")
    (env_dir / "Dockerfile").write_text(DOCKERFILE)
    trial = TrialPaths(trial_dir=tmp_path / f"trial-{i}")
    trial.mkdir()
    config = TaskEnvConfig(workdir="/workspace", network_mode="no-network")
    return LocalSandboxEnvironment(
        environment_dir=env_dir, environment_name="cancel", session_id=f"cancel__{i}__env",
        trial_paths=trial, task_env_config=config, network_policy=config.resolve_baseline(),
        root_parent=str(tmp_path),
    )


@needs_bwrap
def test_start_cancelled_at_any_point_leaves_no_process_root_or_thread(tmp_path):
    # Delays from "during the spawn" to "after the sandbox is up", a few rounds each.
    delays = [0.0, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.008, 0.012, 0.02, 0.05] * 3
    threads_before = threading.active_count()

    async def run() -> tuple[int, float]:
        cancelled, slowest_stop = 0, 0.0
        for i, delay in enumerate(delays):
            env = _environment(tmp_path, i)
            start = asyncio.ensure_future(env.start(force_build=False))
            await asyncio.sleep(delay)
            t = time.monotonic()
            if not start.done():
                start.cancel()
                cancelled += 1
            try:
                await asyncio.wait_for(start, timeout=10)
            except asyncio.CancelledError:
                pass
            await asyncio.wait_for(env.stop(delete=True), timeout=10)
            slowest_stop = max(slowest_stop, time.monotonic() - t)
        return cancelled, slowest_stop

    cancelled, slowest_stop = asyncio.run(asyncio.wait_for(run(), timeout=60))
    assert cancelled >= len(delays) // 2, "too few starts were cancelled mid-way to test anything"
    # Cancel to stopped: no waiting out bwrap (it used to take 5 s each).
    assert slowest_stop < 1.0, f"a cancelled start took {slowest_stop:.1f} s to wind down"
    procs, roots = wait_until_gone(tmp_path, timeout=5)
    assert procs == [], f"sandbox processes outlived their cancelled start: {procs}"
    assert roots == [], f"private roots left by cancelled starts: {roots}"
    # No reader thread is left blocked on a bwrap info pipe.
    deadline = time.monotonic() + 5
    while threading.active_count() > threads_before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= threads_before
