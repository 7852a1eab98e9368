"""Baseline reuse: a baseline (or null-arm) trial whose every input is unchanged is not run again.

A baseline task does not stage the target skill, so its task id (a content address of
every file and setting of its dir, ``emitters/harbor_task.py``) does not change when
the skill does. Everything else that can change a trial's outcome is hashed with it
into the trial's **reuse key**:

- the task id: the case (prompt, fixtures, assertions and the verifier that checks
  them), the environment (Dockerfile, custom environment, MCP servers, limits,
  timeouts, network), every support and decoy skill staged (their content), the
  grader version, the aces-bench version;
- the attempt index;
- the agent: Harbor's agent config as the study passes it (harness, agent or import
  path, its kwargs, the pinned CLI version, the harness's environment, the model name,
  endpoint and key variable name) and ``model.version``;
- the environment: Harbor's environment config (backend type or import path and its
  kwargs);
- the code that runs a trial: aces-bench's agents and backends packages (every
  file), and the installed Harbor version.

Host-side grading is not part of the key: a reused trial is graded again, by the
study's own graders and judge, like any trial of the study.

**Where the store lives**: ``$ACES_BASELINE_STORE``, else ``$XDG_CACHE_HOME/aces-bench/
baselines``, else ``~/.cache/aces-bench/baselines``: one per user and machine, outside
any repository. A baseline belongs to (agent, model, case, environment), not to a
study or a repository, so every study on the machine shares it. It is not kept in the
repository under test on purpose: a change under review must not be able to write the
baselines it is compared with (a pull request committing a stored baseline whose trials
all fail would inflate its own lift). In CI, cache this folder between runs keyed by the
base branch (docs/ci.md): a pull request's cache scope cannot overwrite the base branch's.

Layout: ``<store>/v1/<key[:2]>/<key>/entry.json`` (``StoredTrial``) and ``trial/`` (the
trial dir: result.json, the agent's trajectory, the verifier's logs, the retained
workspace), written to a temporary folder and renamed into place. Only regular files are
stored or copied back (links and special files are skipped). A trial that ended in an
infrastructure failure is never stored (it would be retried); a timeout or an agent
error is an outcome of that arm and is stored like a success.

A study decides what it reuses once, before its first trial, and records it in
``<output>/reuse.json`` under its job's name: a resumed study reuses exactly the same
trials, and a study whose tasks changed (a new job) decides again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from aces_bench import __version__
from aces_bench.core.io import write_json
from aces_bench.core.versioning import VersionedRecord
from aces_bench.records.study import KINDS

if TYPE_CHECKING:  # a report reads reuse.json (ReusePlan); what decides and replays reuse is imported there
    from harbor.models.job.config import JobConfig
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig

    from aces_bench.config.spec import RunSpec
    from aces_bench.emitters.emit import EmitResult
    from aces_bench.emitters.plan import TaskPlan
    from aces_bench.run.collect import TrialRecord

STORE_ENV = "ACES_BASELINE_STORE"
REUSE_FILE = KINDS["reuse"].file
REUSED_DIR = "reused"
REUSABLE = ("baseline", "null")
STORED_STATUSES = ("ok", "timeout", "agent_error", "verifier_error")
LAYOUT = "v1"


def store_root() -> Path:
    """The store folder (read from the environment on each call, so tests can move it)."""
    if os.environ.get(STORE_ENV):
        return Path(os.environ[STORE_ENV]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "aces-bench" / "baselines"


class StoredTrial(VersionedRecord):
    """``entry.json`` of one stored trial."""

    model_config = ConfigDict(frozen=True)
    SCHEMA_ARTIFACT: ClassVar[str] = "stored baseline trial"
    SCHEMA_VERSION: ClassVar[str] = "1"
    SCHEMA_REGENERATE: ClassVar[str] = "delete that entry's folder; the next study stores the trial again"

    key: str
    task_id: str
    attempt: int
    condition: str
    status: str
    trial_name: str
    created_at: datetime
    source: str  # the output folder of the study that ran it
    parts: dict[str, str]  # readable parts of the key (what a reader can check)


@functools.cache
def _code_fingerprint() -> str:
    """aces-bench's agents and backends packages and the installed Harbor: what runs a trial."""
    import aces_bench.agents
    import aces_bench.backends
    from aces_bench.emitters.inputs import folder_digest

    h = hashlib.sha256()
    try:
        harbor = version("harbor")
    except PackageNotFoundError:  # pragma: no cover - harbor is a dependency
        harbor = "absent"
    h.update(f"aces-bench={__version__}\0harbor={harbor}\0".encode())
    for module in (aces_bench.agents, aces_bench.backends):
        h.update(folder_digest(Path(module.__file__).parent, skip_caches=True).encode())
    return h.hexdigest()


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


class ReuseKeys:
    """The reuse key of every (task, attempt) of one study (the study-wide parts computed once):
    ``agent`` and ``environment`` are the Harbor configs its jobs run with."""

    def __init__(self, spec: RunSpec, agent: AgentConfig, environment: EnvironmentConfig):
        agent_data = agent.model_dump(mode="json")
        environment_data = environment.model_dump(mode="json")
        self.parts = {
            "harness": spec.harness.name,
            "cli_version": str(agent_data.get("kwargs", {}).get("version", "")) if spec.harness.cli else "",
            "model": spec.model.name or "n/a",
            "model_version": spec.model.version or "",
            "backend": spec.backend.name,
            "code": _code_fingerprint()[:16],
        }
        self._common = _canonical({"agent": agent_data, "environment": environment_data,
                                   "model_version": spec.model.version, "code": _code_fingerprint()})

    @classmethod
    def of_job(cls, spec: RunSpec, job: JobConfig) -> ReuseKeys:
        """The keys of the study whose Harbor job is ``job`` (``runner.job_config``)."""
        return cls(spec, job.agents[0], job.environment)

    def key(self, task_id: str, attempt: int) -> str:
        return hashlib.sha256(f"{LAYOUT}\0{task_id}\0{attempt}\0{self._common}".encode()).hexdigest()


def _entry_dir(root: Path, key: str) -> Path:
    return root / LAYOUT / key[:2] / key


def _copy_plain(src: Path, dest: Path) -> int:
    """Copy the regular files under ``src`` to ``dest`` (hard links where the file system
    allows); links and special files are skipped. Returns the number of files copied."""
    n = 0
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        rel = Path(dirpath).relative_to(src)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            target = dest / rel / name
            try:
                os.link(path, target)
            except OSError:
                shutil.copyfile(path, target)
            n += 1
    return n


class Reused(BaseModel):
    """One reused trial in a study's plan."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    attempt: int
    key: str
    trial_name: str
    created_at: datetime
    source: str


class ReusePlan(VersionedRecord):
    """What one study (one job) reuses; an entry of ``reuse.json``."""

    model_config = ConfigDict(frozen=True)
    SCHEMA_ARTIFACT: ClassVar[str] = "baseline reuse plan"
    SCHEMA_VERSION: ClassVar[str] = "1"
    SCHEMA_REGENERATE: ClassVar[str] = "delete reuse.json; the study decides again what it reuses"

    job: str
    enabled: bool
    store: str
    decided_at: datetime
    candidates: int  # baseline and null trials the study needs
    reused: list[Reused]
    note: str = ""

    def keys(self) -> set[tuple[str, int]]:
        return set(self.units())

    def units(self) -> list[tuple[str, int]]:
        """The reused (task id, attempt) pairs, in the plan's order."""
        return [(r.task_id, r.attempt) for r in self.reused]

    def tasks(self) -> frozenset[str]:
        """The task ids with a reused attempt (with ``whole_tasks``, every attempt of each is reused)."""
        return frozenset(r.task_id for r in self.reused)

    def summary(self, now: datetime | None = None) -> str:
        if not self.enabled:
            return f"baseline reuse: off ({self.note or 'study.reuse_baseline=false'})"
        if not self.reused:
            return (f"baseline reuse: none of {self.candidates} baseline/null trial(s) found in the store "
                    f"({self.store}); they run")
        now = now or datetime.now(UTC)
        ages = sorted(now - r.created_at for r in self.reused)
        return (f"baseline reuse: {len(self.reused)} of {self.candidates} baseline/null trial(s) from the store "
                f"(ran {_age(ages[0])} to {_age(ages[-1])} ago; {self.store}); "
                f"{self.candidates - len(self.reused)} to run")

    def as_report(self, now: datetime | None = None) -> dict:
        now = now or datetime.now(UTC)
        ages = [(now - r.created_at).total_seconds() / 86400 for r in self.reused]
        return {"enabled": self.enabled, "candidates": self.candidates, "reused": len(self.reused),
                "run": self.candidates - len(self.reused), "store": self.store,
                "oldest_days": max(ages) if ages else None, "newest_days": min(ages) if ages else None,
                "sources": sorted({r.source for r in self.reused}), "summary": self.summary(now), "note": self.note}


def _age(delta) -> str:
    s = delta.total_seconds()
    if s < 3600:
        return f"{max(1, round(s / 60))} min"
    if s < 86400 * 2:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def candidates(emitted: EmitResult, n_attempts: int) -> list[tuple[str, int]]:
    """Every (task id, attempt) of the study whose condition can be reused."""
    return [(t.task_id, a) for t in emitted.tasks if t.condition in REUSABLE for a in range(1, n_attempts + 1)]


def _read_plans(out: Path) -> dict[str, dict]:
    try:
        data = json.loads((out / REUSE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    plans = data.get("plans") if isinstance(data, dict) else None
    return plans if isinstance(plans, dict) else {}


def current_plan(out: Path) -> ReusePlan | None:
    """The plan of the study's latest job (what its report states), if any."""
    try:
        data = json.loads((out / REUSE_FILE).read_text())
        return ReusePlan.model_validate(data["plans"][data["current"]])
    except (OSError, ValueError, KeyError, TypeError, ValidationError):
        return None


def _record(out: Path, plans: dict[str, dict], job: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / REUSE_FILE, {"current": job, "plans": plans})


def decide(spec: RunSpec, emitted: EmitResult, out: Path, job: str, keys: ReuseKeys | None, *, whole_tasks: bool = True,
           root: Path | None = None, now: datetime | None = None) -> ReusePlan:
    """What this study reuses: the plan recorded for ``job`` (the name of the study's whole
    Harbor job) in ``<out>/reuse.json``, else a new plan from the store under ``keys``
    (recorded before any trial runs).

    ``whole_tasks``: reuse a task only when every attempt of it is stored (a fixed study
    runs all attempts of a task in one Harbor job); a sequential study reuses single attempts."""
    plans = _read_plans(out)
    if job in plans:
        try:
            plan = ReusePlan.model_validate(plans[job])
            _record(out, plans, job)
            return plan
        except ValidationError:
            pass  # unreadable: decide again (nothing of this job ran against it yet, or it is redone)
    root = root or store_root()
    now = now or datetime.now(UTC)
    wanted = candidates(emitted, spec.study.n_attempts)
    reused: list[Reused] = []
    note = ""
    on = spec.study.reuses_trials
    if not spec.study.reuse_baseline:
        note = "study.reuse_baseline=false"
    elif not on:
        note = "not with study.stop_on_pass (its later attempts depend on the earlier ones)"
    else:
        max_age = spec.study.reuse_max_age_days
        too_old = 0
        for task_id, attempt in wanted:
            key = keys.key(task_id, attempt)
            entry = read_entry(root, key)
            if entry is None:
                continue
            if max_age is not None and (now - entry.created_at).total_seconds() > max_age * 86400:
                too_old += 1
                continue
            reused.append(Reused(task_id=task_id, attempt=attempt, key=key, trial_name=entry.trial_name,
                                 created_at=entry.created_at, source=entry.source))
        if too_old:
            note = f"{too_old} stored trial(s) older than study.reuse_max_age_days={max_age} not reused"
        if whole_tasks:
            have: dict[str, int] = {}
            for r in reused:
                have[r.task_id] = have.get(r.task_id, 0) + 1
            whole = {t for t, n in have.items() if n == spec.study.n_attempts}
            reused = [r for r in reused if r.task_id in whole]
    plan = ReusePlan(job=job, enabled=on, store=str(root), decided_at=now, candidates=len(wanted),
                     reused=reused, note=note)
    plans[job] = plan.model_dump(mode="json")
    _record(out, plans, job)
    return plan


def read_entry(root: Path, key: str) -> StoredTrial | None:
    """The stored entry of ``key`` if it is complete and consistent, else None."""
    folder = _entry_dir(root, key)
    try:
        entry = StoredTrial.model_validate_json((folder / "entry.json").read_text())
    except (OSError, ValueError, ValidationError):
        return None
    if entry.key != key or not (folder / "trial" / "result.json").is_file():
        return None
    return entry


def materialise(plan: ReusePlan, plans: dict[str, TaskPlan], jobs_dir: Path, *, tasks_dir: Path,
                root: Path | None = None) -> list[TrialRecord]:
    """Copy each reused trial into ``<jobs_dir>/reused/`` and return its record.

    The copy is re-pointed at this study's own emitted task (``<tasks_dir>/<task id>``: the
    id is a content address, so it is the same task the trial ran): its ``result.json`` and
    ``config.json`` then name a task dir that lives as long as the study does, and
    ``aces-bench grade`` reads the trial's arm from there, not from the study that first ran
    it (which may be deleted). Where it came from is kept in ``reused.json``.

    A stored trial that has gone missing since the plan was made is returned as
    ``not_run`` (its cause says so): the study then runs nothing in its place, and the
    report counts it like any missing trial.
    """
    from harbor.models.trial.result import TrialResult

    from aces_bench.run.collect import TrialRecord, classify

    root = root or Path(plan.store)
    out = []
    for r in plan.reused:
        tp = plans.get(r.task_id)
        if tp is None:
            continue
        dest = jobs_dir / REUSED_DIR / f"{r.trial_name}__{r.key[:8]}"
        if not (dest / "result.json").is_file():
            src = _entry_dir(root, r.key) / "trial"
            if not (src / "result.json").is_file():
                out.append(TrialRecord(task_id=r.task_id, attempt=r.attempt, plan=tp, status="not_run",
                                       failure_cause=f"reused baseline trial {r.key[:12]} is gone from the store {root}"))
                continue
            tmp = Path(tempfile.mkdtemp(prefix=".reuse-", dir=_ensure(jobs_dir / REUSED_DIR)))
            _copy_plain(src, tmp)
            if dest.exists():
                shutil.rmtree(dest)
            tmp.rename(dest)
        try:
            _repoint(dest, Path(tasks_dir).resolve() / r.task_id, r)
            result = TrialResult.model_validate_json((dest / "result.json").read_text())
        except (OSError, ValueError, ValidationError) as exc:
            out.append(TrialRecord(task_id=r.task_id, attempt=r.attempt, plan=tp, status="infra_error",
                                   failure_cause=f"reused trial unreadable: {str(exc).splitlines()[0]}",
                                   trial_dir=dest))
            continue
        status, cause = classify(result)
        out.append(TrialRecord(task_id=r.task_id, attempt=r.attempt, plan=tp, status=status, failure_cause=cause,
                               trial_name=result.trial_name, trial_dir=dest, result=result))
    return out


PROVENANCE_FILE = "reused.json"


def _repoint(trial: Path, task_dir: Path, reused: Reused) -> None:
    """Point the copied trial's ``result.json`` and ``config.json`` at ``task_dir`` (this
    study's emitted task) and its ``trial_uri`` at ``trial``; the paths it had (the study
    that ran it) go to ``reused.json``. Idempotent: a resumed study re-points a trial an
    older aces-bench copied unchanged. Files are replaced, never written through (the
    copy's files are hard links into the store)."""
    result = json.loads((trial / "result.json").read_text())
    if not isinstance(result, dict):
        raise ValueError("result.json is not a JSON object")
    task = (result.get("config") or {}).get("task") or {}
    old_task = task.get("path")
    provenance = trial / PROVENANCE_FILE
    if old_task != str(task_dir) or not provenance.is_file():
        write_json(provenance, {"key": reused.key, "source": reused.source, "created_at": reused.created_at,
                                "source_task_path": old_task, "source_trial_uri": result.get("trial_uri"),
                                "task_path": str(task_dir)})
    if old_task == str(task_dir):
        return
    task["path"] = str(task_dir)
    if isinstance(result.get("task_id"), dict) and "path" in result["task_id"]:
        result["task_id"]["path"] = str(task_dir)
    result["trial_uri"] = trial.resolve().as_uri()
    config_path = trial / "config.json"
    try:
        config = json.loads(config_path.read_text())
    except (OSError, ValueError):
        config = None
    if isinstance(config, dict) and isinstance(config.get("task"), dict):
        config["task"]["path"] = str(task_dir)
        write_json(config_path, config)
    write_json(trial / "result.json", result)


def _ensure(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def store(keys: ReuseKeys | None, records: list[TrialRecord], out: Path, *, root: Path | None = None,
          now: datetime | None = None) -> int:
    """Store every finished baseline/null trial of ``records`` not stored yet under ``keys``
    (the study's; None when it does not store: ``StudySpec.reuses_trials``); returns how many were added.

    Trials that were themselves reused, never ran, or failed through infrastructure are
    not stored."""
    if keys is None:
        return 0
    root = root or store_root()
    now = now or datetime.now(UTC)
    added = 0
    for rec in records:
        if rec.plan.condition not in REUSABLE or rec.status not in STORED_STATUSES or rec.trial_dir is None:
            continue
        if rec.trial_dir.parent.name == REUSED_DIR or not (rec.trial_dir / "result.json").is_file():
            continue
        key = keys.key(rec.task_id, rec.attempt)
        final = _entry_dir(root, key)
        if (final / "entry.json").is_file():
            continue
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".store-", dir=final.parent))
        try:
            _copy_plain(rec.trial_dir, tmp / "trial")
            entry = StoredTrial(key=key, task_id=rec.task_id, attempt=rec.attempt, condition=rec.plan.condition,
                                status=rec.status, trial_name=rec.trial_name or rec.trial_dir.name, created_at=now,
                                source=str(out), parts={**keys.parts, "task_id": rec.task_id,
                                                        "attempt": str(rec.attempt)})
            write_json(tmp / "entry.json", entry)
            try:
                tmp.rename(final)
                added += 1
            except OSError:  # another study stored it first
                pass
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return added
