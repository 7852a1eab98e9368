"""Issue 35, item 5: a study's disk use has a cap (``study.max_output_gb``), checked before
every trial starts and reported as a stop reason, as the cost cap is.

The guard alone: a folder over the cap lets no trial start; a trial that leaves a large
folder behind (what a skill filling /logs/artifacts does) stops the next one. Then a
real study under a cap its own emitted tasks already pass: one line, exit 2, the
trials tabled, ``disk-stop.json`` written and the report saying why.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest
from support.studies import needs_bwrap, run_cli, study_overrides

from aces_bench.run.disk import GB, DiskGuard, disk_use

pytestmark = [pytest.mark.timeout(300)]


def _start(guard: DiskGuard, name: str = "t") -> bool:
    try:
        asyncio.run(guard.on_start(SimpleNamespace(trial_name=name)))
        return True
    except asyncio.CancelledError:
        return False


def test_disk_use_counts_blocks_and_never_follows_links(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 300_000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 100_000)
    (tmp_path / "loop").symlink_to(tmp_path)
    assert 400_000 <= disk_use(tmp_path) < 500_000


def test_a_trial_that_leaves_a_large_folder_stops_the_next_one(tmp_path):
    job = tmp_path / "jobs" / "job"
    job.mkdir(parents=True)
    guard = DiskGuard(cap_gb=1 / 1024, root=tmp_path, job_dir=job)  # 1 MB
    assert _start(guard, "t1") and not guard.tripped
    (job / "t1").mkdir()
    (job / "t1" / "fill").write_bytes(b"z" * (2 * 2**20))  # the trial filled its artifacts
    asyncio.run(guard.on_end(SimpleNamespace(trial_name="t1")))
    assert not _start(guard, "t2") and guard.tripped
    stop = guard.stop_record(total=4)
    assert stop.finished == 1 and stop.used_gb * GB >= 2 * 2**20
    assert stop.line().startswith("stopped by study.max_output_gb=0.000976562: ") and "1 of 4 trial(s) ran" in stop.line()


def test_no_cap_never_holds_a_trial(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 2**20)
    assert _start(DiskGuard(cap_gb=None, root=tmp_path, job_dir=tmp_path))


@needs_bwrap
@pytest.mark.parametrize("design", [[], ["study.sequential=true"], ["study.stop_on_pass=true", "study.n_attempts=2"]],
                         ids=["fixed", "sequential", "stop-on-pass"])
def test_a_study_past_its_disk_cap_stops_with_one_line_and_the_report_says_why(tmp_path, design):
    # Every design runs through the one round loop (study/rounds.py), so each stops the same way.
    out = tmp_path / "out"
    proc = run_cli(f"output_dir={out}", *study_overrides(root_parent=tmp_path), "report=true", *design,
                   "study.max_output_gb=0.0001", timeout=240)  # 100 KB: the emitted tasks pass it
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(errors) == 1 and "stopped by study.max_output_gb=0.0001" in errors[0], proc.stderr[-2000:]
    assert "fix: raise study.max_output_gb" in proc.stderr
    stop = json.loads((out / "disk-stop.json").read_text())
    assert stop["finished"] == 0 and stop["cap_gb"] == 0.0001
    assert (out / "trials.parquet").is_file()  # what ran (nothing) is tabled, not lost
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["stopped_by_disk_cap"].startswith("stopped by study.max_output_gb=0.0001")
    assert 'id="disk-stop"' in (out / "report" / "index.html").read_text()
