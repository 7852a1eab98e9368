"""The report's "limits in force": read from what each trial's backend recorded.

A local trial states each limit from its ``local-sandbox.json``; one written before
the per-limit record (the v1 golden) still reads, its disk "not enforced"; a trial of
another backend is "left to the backend", never claimed as enforced.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from aces_bench.reports.limits import NOT_RECORDED, limits_in_force

GOLDEN_V1 = Path(__file__).resolve().parents[1] / "golden" / "local_sandbox" / "local-sandbox_v1.json"
LOCAL = "local bubblewrap sandbox"


def _trial(tmp_path: Path, name: str, limits: dict | None) -> str:
    trial = tmp_path / "jobs" / "job" / name
    trial.mkdir(parents=True)
    if limits is not None:
        data = GOLDEN_V1.read_text()
        if limits:
            rec = json.loads(data)
            rec["limits"] = limits
            data = json.dumps(rec)
        (trial / "local-sandbox.json").write_text(data)
    return str(trial)


def test_limits_are_stated_per_backend_from_what_each_trial_recorded(tmp_path):
    enforced = {"memory": "256 MB (cgroup v2)", "cpus": "1 CPU (cgroup v2)", "disk": "64 MB (tmpfs)",
                "network": "off"}
    trials = pd.DataFrame([
        {"backend": LOCAL, "trial_dir": _trial(tmp_path, "a", enforced)},
        {"backend": LOCAL, "trial_dir": _trial(tmp_path, "b", enforced)},
        {"backend": LOCAL, "trial_dir": _trial(tmp_path, "old", {})},  # the v1 file, no "limits"
        {"backend": LOCAL, "trial_dir": _trial(tmp_path, "never-started", None)},
        {"backend": "docker", "trial_dir": None},
    ])
    rows = limits_in_force(trials, tmp_path, {LOCAL})
    by = {(r.backend, r.disk): r for r in rows}
    assert by[(LOCAL, "64 MB (tmpfs)")].n_trials == 2
    assert by[(LOCAL, "64 MB (tmpfs)")].memory == "256 MB (cgroup v2)"
    old = by[(LOCAL, "not enforced")]
    assert old.n_trials == 1 and old.memory == "not enforced" and old.network == "off"
    assert by[(LOCAL, NOT_RECORDED)].note
    docker = by[("docker", "left to the backend")]
    assert docker.memory == "left to the backend" and "records no proof" in docker.note
    assert sum(r.n_trials for r in rows) == len(trials)  # every trial is in one row


def test_a_moved_study_folder_still_finds_its_trials(tmp_path):
    trial = Path(_trial(tmp_path / "before", "t", {"memory": "m", "cpus": "c", "disk": "d", "network": "n"}))
    shutil.move(tmp_path / "before", tmp_path / "after")
    rows = limits_in_force(pd.DataFrame([{"backend": LOCAL, "trial_dir": str(trial)}]), tmp_path / "after", {LOCAL})
    assert [(r.memory, r.disk) for r in rows] == [("m", "d")]
