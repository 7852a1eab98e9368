"""Resume after an interrupted study: Ctrl-C mid-trial, then the identical command again.

The study (slow-colsum fixture: 3 cases x 2 conditions, with-skill trials ~1.7 s
each) runs in a subprocess through the real CLI. It is interrupted with SIGINT once
some trials have finished, while others are running. Re-running the identical
command must keep the finished trials untouched, run the rest (including the ones
the interrupt cut short), and produce a table with every expected row exactly once;
no sandbox process or private root may survive.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time

from support.studies import (
    SLOW_SKILL,
    needs_bwrap,
    private_roots,
    read_table,
    run_cli,
    start_cli,
    study_overrides,
    trial_results,
    wait_until_gone,
)

N_TRIALS = 6
FINISHED_BEFORE_INTERRUPT = 2


def _interrupt_after_some_trials(args: list[str], out) -> tuple[int, str]:
    """Start the study, SIGINT it once some trials finished (SIGABRT if it hangs)."""
    proc = start_cli(*args)
    deadline = time.monotonic() + 60
    try:
        while len(trial_results(out)) < FINISHED_BEFORE_INTERRUPT:
            assert proc.poll() is None, f"the study ended before it could be interrupted:\n{proc.stdout.read()}"
            assert time.monotonic() < deadline, "no trial finished within 60 s"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        try:
            output, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)  # faulthandler prints where every thread hangs
            output, _ = proc.communicate()
            raise AssertionError(f"the study ignored SIGINT for 20 s and was aborted:\n{output}") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, output


def _cut_short(out) -> list[str]:
    """Trial dirs the interrupt cut short: no result, or a result saying cancelled."""
    cut = []
    for trial_dir in (out / "jobs").glob("*/*/"):
        result = trial_dir / "result.json"
        if not result.is_file():
            cut.append(trial_dir.name)
            continue
        info = json.loads(result.read_text()).get("exception_info")
        if info and info["exception_type"] == "CancelledError":
            cut.append(trial_dir.name)
    return sorted(cut)


@needs_bwrap
def test_interrupted_study_resumes_keeping_finished_trials(tmp_path):
    out = tmp_path / "out"
    args = [f"hydra.run.dir={out}",
            *study_overrides(skill=SLOW_SKILL, cases=("explicit-1", "implicit-1", "contextual-1"),
                             root_parent=tmp_path)]

    returncode, first_output = _interrupt_after_some_trials(args, out)
    assert returncode == 130, first_output
    assert "interrupted: finished trials are kept; re-run the same command to resume" in first_output
    assert "Traceback" not in first_output
    cut = _cut_short(out)
    assert cut, f"the interrupt hit no running trial; nothing tests mid-trial resume:\n{first_output}"
    kept = {name: path.stat().st_mtime_ns for name, path in trial_results(out).items() if name not in cut}
    assert len(kept) >= FINISHED_BEFORE_INTERRUPT
    # Ctrl-C ends every sandbox of the cut trials, not just the Python process.
    procs, roots = wait_until_gone(tmp_path)
    assert procs == [] and roots == [], f"left after SIGINT: {procs} {roots}"

    second = run_cli(*args)
    assert second.returncode == 0, second.stdout + second.stderr
    log = second.stdout + second.stderr
    assert f"trials: {N_TRIALS} in this job, {len(kept)} already done, {N_TRIALS - len(kept)} to run" in log

    results = trial_results(out)
    for name, mtime in kept.items():
        assert name in results, f"finished trial {name} was not kept"
        assert results[name].stat().st_mtime_ns == mtime, f"finished trial {name} was run again"
    for name in cut:
        assert name not in results, f"interrupted trial {name} was kept instead of re-run"
    assert len(results) == N_TRIALS

    table = read_table(out)
    assert len(table) == N_TRIALS
    assert not table.duplicated(["task_id", "attempt"]).any()
    assert not table.duplicated(["case_id", "condition", "attempt"]).any()
    assert set(table["status"]) == {"ok"}, table[["task_id", "status", "failure_cause"]].to_string()
    assert set(table["trial_name"]) == set(results)
    assert sorted(table["condition"].value_counts().items()) == [("baseline", 3), ("with_skill", 3)]
    assert (table.loc[table["condition"] == "with_skill", "reward"] == 1.0).all()

    procs, roots = wait_until_gone(tmp_path)
    assert procs == [] and roots == [], f"left after the re-run: {procs} {roots}"


@needs_bwrap
def test_study_killed_hard_resumes_and_leaves_no_sandbox_process(tmp_path):
    """SIGKILL (a CI timeout, an OOM kill) gives no chance to clean up: the re-run must
    still complete the study, and no sandbox process may outlive its run (bubblewrap's
    --die-with-parent). Private roots of the killed run are reported as a known gap."""
    out = tmp_path / "out"
    args = [f"hydra.run.dir={out}", *study_overrides(skill=SLOW_SKILL, cases=("explicit-1",), root_parent=tmp_path)]
    proc = start_cli(*args)
    deadline = time.monotonic() + 60
    try:
        # Kill while the with-skill trial's script runs: its sandbox and root exist.
        while not (private_roots(tmp_path) and trial_results(out)):
            assert proc.poll() is None, f"the study ended before it could be killed:\n{proc.stdout.read()}"
            assert time.monotonic() < deadline, "no trial finished within 60 s"
            time.sleep(0.02)
        proc.kill()
    finally:
        proc.communicate()
    procs, _ = wait_until_gone(tmp_path, timeout=5, roots_too=False)
    assert procs == [], f"sandbox processes outlived the killed run: {procs}"
    orphaned = set(private_roots(tmp_path))
    assert orphaned, "the kill hit no running trial; nothing tests a hard kill"

    second = run_cli(*args)
    assert second.returncode == 0, second.stdout + second.stderr
    table = read_table(out)
    assert len(table) == 2 and set(table["status"]) == {"ok"}, table[["task_id", "status", "failure_cause"]]
    procs, roots = wait_until_gone(tmp_path, timeout=5, roots_too=False)
    assert procs == []
    assert set(roots) <= orphaned, "the re-run itself left private roots behind"
    assert roots == [], f"the re-run did not sweep the killed run's private roots: {roots}"
