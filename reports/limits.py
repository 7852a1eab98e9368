"""The report's run conditions: the memory, CPU, disk, network and process limits each trial
ran under, and the sandbox's isolation (every protection in force, or which are missing).

Read from what the backend recorded, never from what the config asked: a local-backend
trial's ``local-sandbox.json`` says per limit whether it was enforced and how (cgroup,
tmpfs) or "not enforced". Other backends apply the task's limits themselves and record
nothing aces-bench can check, so the report says so instead of claiming them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from aces_bench.core.errors import ReportError
from aces_bench.records.summary import LimitsRow

LIMITS = ("memory", "cpus", "disk", "network", "processes", "isolation")
NOT_RECORDED = "not recorded (no local-sandbox.json for this trial)"


def _sandbox_file(trial_dir: str, results_dir: Path) -> Path | None:
    from aces_bench.backends.provenance import PROVENANCE_FILE

    path = Path(trial_dir)
    if not path.is_dir():  # a moved study folder: find the trial dir by name under it
        path = next(iter(sorted(results_dir.glob(f"**/jobs/*/{path.name}"))), path)
    file = path / PROVENANCE_FILE
    return file if file.is_file() else None


def _recorded(file: Path) -> dict[str, str]:
    from aces_bench.backends.provenance import read_sandbox_provenance

    try:
        prov = read_sandbox_provenance(file)
    except ReportError as exc:
        return dict.fromkeys(LIMITS, f"unreadable: {exc.message}")
    if prov.limits:
        got = {k: prov.limits.get(k, "not recorded") for k in LIMITS}
        if "isolation" not in prov.limits:  # written before the sandbox was a boundary
            got["isolation"] = "not a security boundary (recorded before user namespace and seccomp)"
        return got
    # Written before the per-limit record: memory and CPU were one statement, disk was never limited.
    return {"memory": prov.resource_limits, "cpus": prov.resource_limits, "disk": "not enforced",
            "network": prov.network, "processes": "not enforced",
            "isolation": "not a security boundary (recorded before user namespace and seccomp)"}


def local_backends(members) -> set[str]:
    """The backend labels of the study's members that ran on backend=local."""
    return {m.provenance.spec.backend.display for m in members
            if m.provenance is not None and m.provenance.spec.backend.is_local}


def limits_in_force(trials: pd.DataFrame, results_dir: Path, local: set[str]) -> list[LimitsRow]:
    """Each distinct set of limits the study's trials ran under, with its trial count.

    ``local``: the backend labels that are backend=local (:func:`local_backends`).
    """
    rows: Counter[tuple] = Counter()
    for rec in trials.to_dict("records"):
        backend = str(rec.get("backend") or "unknown")
        trial_dir = rec.get("trial_dir")
        file = _sandbox_file(str(trial_dir), Path(results_dir)) if isinstance(trial_dir, str) and trial_dir else None
        if file is not None:
            got = _recorded(file)
            rows[(backend, *(got[k] for k in LIMITS), None)] += 1
        elif backend in local:
            rows[(backend, *(NOT_RECORDED,) * len(LIMITS), "the trial's sandbox never started or its record is gone")] += 1
        else:
            note = (f"the {backend} backend applies the task's cpus/memory_mb/storage_mb itself; "
                    "aces-bench records no proof they were in force")
            rows[(backend, *("left to the backend",) * len(LIMITS), note)] += 1
    n = len(LIMITS)
    return [LimitsRow(backend=k[0], n_trials=c, **dict(zip(LIMITS, k[1:n + 1], strict=True)), note=k[n + 1])
            for k, c in sorted(rows.items(), key=lambda kv: (kv[0][0], -kv[1]))]
