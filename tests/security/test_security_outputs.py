"""Findings 5, 8 and 9: the output folder is one study's at a time, signals end every
command with one line, and a bad output folder is an error naming it.

The lock is checked with real processes: a live holder in another process, a holder
killed with SIGKILL (stale: taken over), and two real studies started on one folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from support.security import HOSTILE_SKILL
from support.studies import (
    ROOT,
    SLOW_SKILL,
    cli_env,
    job_dirs,
    needs_bwrap,
    run_cli,
    start_cli,
    study_overrides,
)

from aces_bench.core.errors import RunError
from aces_bench.study.outlock import LOCK_FILE, holder_of, study_lock

pytestmark = [pytest.mark.timeout(200)]

HOLD = "import sys, time; from aces_bench.study.outlock import study_lock\nwith study_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)\n"


def _holder(out) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_live_holder_makes_a_second_run_refuse_naming_it(tmp_path):
    holder = _holder(tmp_path)
    try:
        start = time.monotonic()
        with pytest.raises(RunError) as err, study_lock(tmp_path):
            pass
        assert time.monotonic() - start < 1, "the second run must refuse at once, not wait"
        assert f"in use by aces-bench pid {holder.pid} on host {os.uname().nodename}" in str(err.value)
        assert "another output_dir" in str(err.value)
    finally:
        holder.kill()
        holder.wait()


def test_a_stale_lock_from_a_killed_run_is_taken_over(tmp_path):
    holder = _holder(tmp_path)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert holder_of(tmp_path)["pid"] == holder.pid  # the dead holder's record is still there
    with study_lock(tmp_path):
        assert holder_of(tmp_path)["pid"] == os.getpid()


@needs_bwrap
@pytest.mark.timeout(400)
def test_two_studies_on_one_folder_second_refuses_and_first_is_intact(tmp_path):
    # A copy of the slow skill that holds its trial until the test releases it, by a file
    # in the trial's /logs/agent (a host dir): the first study is surely still running
    # when the second starts, however loaded the machine.
    slow = tmp_path / "slow-colsum"
    shutil.copytree(SLOW_SKILL, slow)
    script = slow / "scripts" / "slowsum.py"
    script.write_text(script.read_text().replace(
        'time.sleep(float(os.environ.get("SLOW_COLSUM_WAIT", "1.5")))',
        'deadline = time.time() + 150\nwhile not os.path.exists("/logs/agent/release") and time.time() < deadline:\n'
        '    time.sleep(0.1)'))
    assert "release" in script.read_text()
    out = tmp_path / "out"
    args = [f"hydra.run.dir={out}", *study_overrides(skill=slow, cases=("explicit-1",), root_parent=tmp_path)]
    first = start_cli(*args)
    try:
        deadline = time.monotonic() + 120
        while not (out / LOCK_FILE).is_file() or not holder_of(out):
            assert first.poll() is None and time.monotonic() < deadline, "the first study never took the lock"
            time.sleep(0.05)
        # Even with different skills (the "one set of skills per folder" check) it refuses.
        second = run_cli(f"hydra.run.dir={out}", *study_overrides(skill=HOSTILE_SKILL, root_parent=tmp_path),
                         timeout=120)
        assert first.poll() is None, "the first study ended before the second started; nothing was tested"
        release = time.monotonic() + 200
        while first.poll() is None and time.monotonic() < release:
            for agent_dir in out.glob("jobs/*/*/agent"):
                if not (agent_dir / "release").exists():
                    (agent_dir / "release").write_text("go\n")
            time.sleep(0.2)
        first_out, _ = first.communicate(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert second.returncode == 2, second.stdout + second.stderr
    assert f"this output folder is in use by aces-bench pid {first.pid}" in second.stderr
    assert "Traceback" not in second.stderr
    assert first.returncode == 0, first_out
    jobs = job_dirs(out)
    assert len(jobs) == 1
    trials = [p for p in jobs[0].iterdir() if p.is_dir()]
    assert len(trials) == 2 and all((t / "result.json").is_file() for t in trials)


@pytest.mark.parametrize("key", ["output_dir", "hydra.run.dir"])
def test_an_output_folder_that_is_a_file_is_an_error_naming_it(tmp_path, key):
    blocker = tmp_path / "taken"
    blocker.write_text("not a folder\n")
    for target in (blocker, blocker / "sub"):
        proc = run_cli(f"{key}={target}", "emit_only=true", timeout=60)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        assert f"error: {target}: the output folder" in proc.stderr and "fix:" in proc.stderr


def _signal_when(proc: subprocess.Popen, sig: int, ready) -> str:
    deadline = time.monotonic() + 60
    while not ready():
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, "never got ready to be signalled"
        time.sleep(0.05)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    return out


@needs_bwrap
@pytest.mark.parametrize("sig, code, word", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_a_signalled_study_ends_with_one_line(tmp_path, sig, code, word):
    out = tmp_path / "out"
    proc = start_cli(f"hydra.run.dir={out}", *study_overrides(skill=SLOW_SKILL, cases=("explicit-1",),
                                                              root_parent=tmp_path))
    text = _signal_when(proc, sig, lambda: list(tmp_path.glob("aces-sandbox-*")))
    assert proc.returncode == code, text
    assert f"{word}: finished trials are kept; re-run the same command to resume" in text
    assert "Traceback" not in text


@pytest.fixture(scope="module")
def reported_study(tmp_path_factory):
    """A small finished study with its report (the fixture skill, reference agent)."""
    tmp = tmp_path_factory.mktemp("reported")
    out = tmp / "out"
    proc = run_cli(f"output_dir={out}", *study_overrides(root_parent=tmp), "report=true", timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _report_files(out):
    report = out / "report"
    return {p.relative_to(report).as_posix(): p.read_bytes() for p in report.rglob("*") if p.is_file()}


@needs_bwrap
@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGKILL, -9)])
def test_a_report_killed_mid_write_leaves_the_previous_one_whole(reported_study, sig, code):
    out = reported_study
    before = _report_files(out)
    assert "index.html" in before and "summary.json" in before
    proc = subprocess.Popen([sys.executable, "-m", "aces_bench.cli", "report", str(out)], cwd=ROOT, env=cli_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # Signalled once it has started writing the new report (its staging dir exists).
    text = _signal_when(proc, sig, lambda: any(out.glob(".report.staging-*")))
    assert proc.returncode == code, text
    if sig == signal.SIGTERM:
        assert text.strip().splitlines()[-1].startswith("terminated: aces-bench report stopped"), text
        assert "Traceback" not in text
        assert not list(out.glob(".report.staging-*")), "a handled signal leaves no staging dir"
    assert _report_files(out) == before, "the previous report must stay whole"
    if sig == signal.SIGTERM:
        return
    # After a hard kill, the next report removes what it left and swaps in a whole new one.
    again = run_cli("report", str(out), timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    assert not list(out.glob(".report.staging-*"))
    assert set(_report_files(out)) == set(before)
