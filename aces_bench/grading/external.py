"""Grade what already exists: the trials of any Harbor job dir, aces-bench's or not.

``find_trials(root)`` accepts a trial dir, a job dir (trial subdirs) or a folder of
job dirs at any depth: a trial dir is a folder whose ``result.json`` is a Harbor
``TrialResult`` (it has ``trial_name``); a job's own ``result.json`` is skipped and
its folder searched. ``subjects_for(...)`` turns each trial into a ``TrialSubject``.

A trial's task dir is the one its ``result.json`` names, else (an aces-bench task, a
study moved or copied whole) its study's own ``tasks/<id>`` (``task_dir``).

Rules, in order (each choice is written to the trial's ``notes``):

- **Case** (only with ``--cases``): an aces-bench trial (its task dir is present and
  has ``[metadata.aces]``) matches the case with its ``case_id`` when the suite is of
  the same skill; any other trial matches the case whose ``id`` equals its task name
  (``org/name`` -> ``name``) or its trial dir's name before ``__``. No match: the
  case-dependent metrics are unscored with the reason.
- **Condition**: ``--condition``; else aces metadata (for an aces-bench task, named
  ``aces/<id>``, nothing else); else the root's own name or a folder between the root
  and the trial saying so (``skills``/``with_skill``... or ``noskills``/``baseline``...);
  else ``with_skill`` when the agent config stages skills. Nothing else is guessed: a
  trial none of these names (an aces-bench trial whose task dir is gone, an unmarked
  job dir) stops ``grade`` with one error naming the trials and the fix, because an
  arm assumed wrong silently changes the lift.
- **Workdir** (security's "outside the workspace"): ``--workdir``; else aces
  metadata; else the task's ``[environment].workdir`` when its task.toml is present;
  else the root most named by absolute paths in the task instruction (the first user
  step: ``/root/x.stl`` -> ``/root``; ``/home/u/...`` -> ``/home/u``), which is the
  task author's word, not the agent's, so it cannot excuse what the agent wrote;
  else ``/workspace``.
- **Allowed skills** (routing): ``--allowed-skills``; else aces metadata; else the
  case's expected and acceptable skills. With none of these, routing cannot be
  judged and is left unscored (skill_efficiency = tool efficiency alone).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harbor.models.trial.paths import TrialPaths
from harbor.models.trial.result import TrialResult
from pydantic import ValidationError

from aces_bench.cases import EvalCase, EvalSuite, load_suite
from aces_bench.cases.formats import parse_evals_text, read_evals_file
from aces_bench.config.spec import WorkspaceSpec
from aces_bench.core.conditions import ALL_CONDITIONS
from aces_bench.core.errors import EmitError, EvalsError, RunError
from aces_bench.core.versioning import load_model
from aces_bench.emitters.task_metadata import TASK_METADATA_KEY, TASK_METADATA_REGENERATE, TaskMetadata
from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.grading.subject import TrialSubject
from aces_bench.inputs.skills import SKILL_FILE, load_skill
from aces_bench.inputs.trialfiles import read_trial_file
from aces_bench.records.trials import TrialFacts
from aces_bench.run.collect import classify

MAX_DEPTH = 6
DECLARED = WorkspaceSpec.model_fields  # a foreign trial that names no workdir or skills dir: the settings' defaults
ACES_TASK_PREFIX = "aces/"  # emitters/harbor_task.py names every emitted task aces/<task id>
STUDY_DEPTH = 3  # <study>/jobs/<job>/<trial>: the trial's job dir, jobs/ and the study
WITH_MARKERS = {"skills", "skill", "with_skill", "with-skill", "with_skills", "with-skills", "withskills"}
BASE_MARKERS = {"noskills", "noskill", "no-skills", "no_skills", "no-skill", "no_skill", "baseline",
                "without_skill", "without-skill", "without_skills", "without-skills"}
_ABS_PATH = re.compile(r"(?<![\w.~:/-])(/(?:home/[A-Za-z0-9_.-]+|[A-Za-z0-9_.-]+))(?:/[^\s'\"`)\],;]*)?")
_NOT_WORKDIRS = {"/tmp", "/logs", "/dev", "/proc", "/sys", "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64",
                 "/var", "/skills", "/tests", "/solution", "/run", "/opt", "/boot", "/mnt", "/media", "/srv"}


@dataclass(frozen=True)
class FoundTrial:
    trial_dir: Path
    result: TrialResult


@dataclass(frozen=True)
class CaseSpec:
    suite: EvalSuite
    source: Path
    skill_dir: Path | None

    def by_id(self) -> dict[str, EvalCase]:
        return {c.id: c for c in self.suite.evals}


def find_trials(root: Path) -> tuple[list[FoundTrial], list[tuple[Path, str]]]:
    """Trials under ``root`` (sorted by path) and trial dirs that cannot be read, with the reason."""
    root = Path(root)
    if not root.is_dir():
        raise RunError("not a folder", where=root, fix="point at a Harbor job dir, a trial dir or a folder of job dirs")
    found: list[FoundTrial] = []
    broken: list[tuple[Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        depth = len(here.relative_to(root).parts)
        dirnames.sort()
        if depth >= MAX_DEPTH:
            dirnames[:] = []
        if "result.json" in filenames:
            kind, payload = _read_result(TrialPaths(here).result_path)
            if kind == "trial":
                found.append(FoundTrial(here, payload))
                dirnames[:] = []
                continue
            if kind == "broken":
                broken.append((here, payload))
                dirnames[:] = []
                continue
        elif "config.json" in filenames and "agent" in dirnames and depth > 0:
            broken.append((here, "trial was interrupted: no result.json"))
            dirnames[:] = []
    return found, broken


def _read_result(path: Path) -> tuple[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return "broken", f"unreadable result.json: {exc}"
    if not isinstance(data, dict) or "trial_name" not in data:
        return "job", None  # a job's stats (or something else): keep looking below it
    try:
        return "trial", TrialResult.model_validate(data)
    except ValidationError as err:
        return "broken", f"result.json is not a Harbor TrialResult: {str(err).splitlines()[0]}"


def load_cases(path: Path) -> CaseSpec:
    """A case spec from a skill folder (SKILL.md + evals) or one evals file (json/jsonl/yaml)."""
    path = Path(path)
    if path.is_dir():
        if not (path / SKILL_FILE).is_file():
            raise EvalsError(f"no {SKILL_FILE} here", where=path,
                             fix="pass a skill folder (holding SKILL.md and evals/) or an evals file")
        skill = load_skill(path)
        return CaseSpec(load_suite(path, skill.name), path, path.resolve())
    if not path.is_file():
        raise EvalsError("no such file or folder", where=path, fix="pass an evals.json/jsonl/yaml file or a skill folder")
    skill_dir = path.parent.parent if path.parent.name == "evals" else None
    if skill_dir is not None and not (skill_dir / SKILL_FILE).is_file():
        skill_dir = None
    raw = parse_evals_text(path.read_text(encoding="utf-8", errors="replace"), path)
    name = raw.get("skill_name") if isinstance(raw, dict) else None
    if skill_dir is not None:
        name = load_skill(skill_dir).name
    if not isinstance(name, str) or not name:
        raise EvalsError("the evals file names no skill_name", where=f"{path}:skill_name",
                         fix="add \"skill_name\": \"<skill>\" at the top, or pass the skill folder instead")
    suite = read_evals_file(path, name, (skill_dir or path.parent).resolve())
    return CaseSpec(suite, path, skill_dir.resolve() if skill_dir else None)


def aces_metadata(result: TrialResult, trial_dir: Path | None = None) -> dict[str, Any] | None:
    """``[metadata.aces]`` of the trial's task dir (``task_dir``) when it is on disk, validated
    (and migrated) by ``TaskMetadata``; one from a newer aces-bench is an EmitError, not a guess."""
    folder = task_dir(result, trial_dir)
    meta = (_read_task_toml(folder) or {}).get("metadata", {}).get(TASK_METADATA_KEY)
    if not isinstance(meta, dict):
        return None
    return load_model(TaskMetadata, meta, where=folder / "task.toml", cls=EmitError, prefix="metadata.aces",
                      fix=TASK_METADATA_REGENERATE).as_table()


def task_dir(result: TrialResult, trial_dir: Path | None = None) -> Path | None:
    """The trial's task dir: the one its ``result.json`` names, when it is on disk; else, for
    an aces-bench task (``aces/<id>``, a content address), the study's own ``tasks/<id>``
    found just above the trial (``<study>/jobs/<job>/<trial>``: a study moved or copied
    whole). Nothing further up is searched, and a linked task dir is not followed."""
    path = getattr(result.config.task, "path", None)
    if path and (Path(path) / "task.toml").is_file():
        return Path(path)
    task_id = result.task_name[len(ACES_TASK_PREFIX):] if result.task_name.startswith(ACES_TASK_PREFIX) else ""
    if trial_dir is None or not task_id or "/" in task_id or task_id in {".", ".."}:
        return None
    for parent in Path(trial_dir).resolve().parents[:STUDY_DEPTH]:
        candidate = parent / "tasks" / task_id
        if not candidate.is_symlink() and (candidate / "task.toml").is_file():
            return candidate
    return None


def _task_toml(result: TrialResult, trial_dir: Path | None = None) -> dict[str, Any] | None:
    return _read_task_toml(task_dir(result, trial_dir))


def _read_task_toml(folder: Path | None) -> dict[str, Any] | None:
    """``folder``'s task.toml, parsed; None when there is no folder or it cannot be read."""
    if folder is None:
        return None
    try:
        return tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def task_key(result: TrialResult) -> str:
    return result.task_name.split("/", 1)[-1]


def infer_workdir(instruction: str) -> str | None:
    """The root most named by absolute paths in the instruction (first seen wins a tie), or None."""
    roots = [m.group(1) for m in _ABS_PATH.finditer(instruction or "")]
    roots = [r for r in roots if r not in _NOT_WORKDIRS and r != "/home"]
    if not roots:
        return None
    counts = Counter(roots)
    best = max(counts.values())
    return next(r for r in roots if counts[r] == best)


def _instruction(trial_dir: Path) -> str:
    loaded = load_trial_trajectory(trial_dir)
    if loaded.trajectory is None:
        return ""
    for step in loaded.trajectory.steps:
        if step.source == "user" and isinstance(step.message, str):
            return step.message
    return ""


def _condition(found: FoundTrial, root: Path, meta: dict | None, forced: str | None) -> tuple[str | None, str]:
    if forced:
        return forced, "given with --condition"
    if meta and meta.get("condition") in ALL_CONDITIONS:
        return meta["condition"], "from the task's aces metadata"
    if found.result.task_name.startswith(ACES_TASK_PREFIX):
        # An aces-bench task: only its own metadata names the arm (a study or folder named
        # "baseline" must not relabel its with-skill trials).
        return None, _why_no_arm(found.result) + " (an aces-bench task: only its [metadata.aces] names the arm)"
    # The folder the user pointed at counts (`grade trials/noskills`), then every folder below it.
    rel = found.trial_dir.resolve().relative_to(root.resolve()).parts if found.trial_dir != root else ()
    parts = [p.lower() for p in (root.resolve().name, *rel)]
    for p in reversed(parts):
        if p in WITH_MARKERS:
            return "with_skill", f"from the path component {p!r}"
        if p in BASE_MARKERS:
            return "baseline", f"from the path component {p!r}"
    if found.result.config.agent.skills:
        return "with_skill", "the agent config stages skills"
    return None, _why_no_arm(found.result)


def _why_no_arm(result: TrialResult) -> str:
    path = getattr(result.config.task, "path", None)
    if not path:
        return "its result.json names no task dir"
    if not (Path(path) / "task.toml").is_file():
        return f"its task dir {path} is gone"
    return f"its task {path} has no [metadata.{TASK_METADATA_KEY}] and nothing else names its arm"


def _refuse_unknown_arms(unknown: list[tuple[FoundTrial, str]]) -> None:
    """One error for every trial whose arm nothing names (never a guess: a reused baseline
    graded as with_skill would change the lift without a word)."""
    if not unknown:
        return
    shown = "; ".join(f"{f.trial_dir} ({why})" for f, why in unknown[:3])
    more = f"; and {len(unknown) - 3} more" if len(unknown) > 3 else ""
    raise RunError(
        f"{len(unknown)} trial(s) name no arm (with_skill or baseline), so none is graded: {shown}{more}",
        where=unknown[0][0].trial_dir,
        fix="grade the study's own jobs/ while its tasks/ is present (aces-bench trials read their arm from "
            "their task dir), or pass --condition with_skill|baseline for trials of one arm, or put them under "
            "a folder named skills/ or noskills/")


def _artifacts_dir(trial_dir: Path) -> Path | None:
    artifacts = TrialPaths(trial_dir).artifacts_dir
    for ws in (artifacts / "workspace", artifacts / "logs" / "artifacts" / "workspace"):
        if ws.is_dir():
            return ws
    return None


def _reward(result: TrialResult) -> float | None:
    vr = result.verifier_result
    if vr is None or not vr.rewards or vr.rewards.get("reward") is None:
        return None
    return float(vr.rewards["reward"])


def verifier_checks(trial_dir: Path, meta: dict | None, case: EvalCase | None) -> bool:
    """Whether the trial's reward comes from real checks.

    A task aces-bench did not emit, or a native Harbor task it paired, has its own
    ``tests/``: its reward is a check. An emitted task's verifier applies the case's
    assertions, and checks nothing when there are none: its ``details.json`` lists
    the checks it applied.
    """
    if not meta or str((meta.get("environment") or {}).get("source", "")).startswith("evals/harbor/"):
        return True
    if case is not None:
        return bool(case.checks)
    try:
        read = read_trial_file(TrialPaths(trial_dir).verifier_dir / "details.json")
        details = json.loads(read.data) if read.ok and not read.truncated else None
    except ValueError:
        return True  # nothing says otherwise: the reward stands, as Harbor recorded it
    return not (isinstance(details, dict) and details.get("checks") == [])


def _started(f: FoundTrial) -> tuple[datetime, str]:
    return (f.result.started_at or datetime.min, f.result.trial_name)


def subjects_for(
    found: list[FoundTrial],
    root: Path,
    *,
    cases: CaseSpec | None = None,
    workdir: str | None = None,
    skills_dir: str | None = None,
    allowed_skills: tuple[str, ...] | None = None,
    condition: str | None = None,
    judge_label: str | None = None,
) -> list[TrialSubject]:
    """One TrialSubject per found trial, by the rules in the module docstring."""
    by_id = cases.by_id() if cases else {}
    info = []
    unknown: list[tuple[FoundTrial, str]] = []
    for f in found:
        meta = aces_metadata(f.result, f.trial_dir)
        cond, why_cond = _condition(f, root, meta, condition)
        if cond is None:
            unknown.append((f, why_cond))
        info.append((f, meta, cond, why_cond))
    _refuse_unknown_arms(unknown)
    # attempts: numbered per (task, condition) in start order
    groups: dict[tuple[str, str], list[FoundTrial]] = defaultdict(list)
    for f, _, cond, _ in info:
        groups[(task_key(f.result), cond)].append(f)
    attempt_of = {id(f): i for fs in groups.values() for i, f in enumerate(sorted(fs, key=_started), start=1)}

    subjects = []
    for f, meta, cond, why_cond in info:
        r = f.result
        notes = [f"condition {cond}: {why_cond}"]
        found_task = task_dir(r, f.trial_dir)
        if found_task is not None and str(found_task) != str(r.config.task.path):
            notes.append(f"task dir {found_task}: the study's own (result.json names {r.config.task.path}, gone)")
        key = task_key(r)
        case, case_note = _match_case(f, meta, cases, by_id)
        notes.append(case_note)
        target = (case.expected_skill if case and case.expected_skill else None) or (
            cases.suite.skill_name if case else (meta or {}).get("skill")) or key
        wd, why_wd = _workdir(f, meta, workdir)
        notes.append(f"workdir {wd}: {why_wd}")
        allowed, routing_known = _allowed(meta, case, allowed_skills, target)
        if not routing_known:
            notes.append("routing unscored: no case spec, no --allowed-skills and no aces metadata name the "
                         "skills this trial may read")
        status, cause = classify(r)
        agent = r.agent_info
        model = (agent.model_info.name if agent and agent.model_info else None) or r.config.agent.model_name or "none"
        env = r.config.environment
        harness = agent.name if agent else (r.config.agent.name or r.config.agent.import_path or "unknown")
        facts = TrialFacts(
            task_id=key, attempt=attempt_of[id(f)], skill=target,
            case_id=case.id if case else str((meta or {}).get("case_id") or key),
            case_kind=case.kind if case else (meta or {}).get("case_kind"),
            negative_control=case.is_negative_control if case else bool((meta or {}).get("negative_control", False)),
            condition=cond, status=status, failure_cause=cause, trial_name=r.trial_name, trial_dir=str(f.trial_dir),
            reward=_reward(r), workspace_mode=(meta or {}).get("workspace_mode", "isolation"),
            decoy_set=(meta or {}).get("decoy_set", "none"),
            n_visible_skills=int((meta or {}).get("n_visible_skills", len(r.config.agent.skills or []))),
        )
        subjects.append(TrialSubject(
            facts=facts, case=case, result=r, target_skill=target, allowed_skills=allowed,
            staged_skills=tuple(s["name"] for s in (meta or {}).get("staged_skills", []) if isinstance(s, dict)),
            skills_dir=skills_dir or (meta or {}).get("skills_dir", DECLARED["skills_dir"].default), workdir=wd,
            answer_file=(meta or {}).get("answer_file", "answer.txt"), artifacts_dir=_artifacts_dir(f.trial_dir),
            skill_dir=cases.skill_dir if cases and case else None,
            labels={"run_id": f.trial_dir.parent.name, "harness": harness, "model": model, "agent_label": harness,
                    "judge_label": judge_label,
                    "backend": str(getattr(env.type, "value", env.type) or env.import_path or "unknown")},
            notes=tuple(notes), routing_known=routing_known,
            verifier_checks=verifier_checks(f.trial_dir, meta, case),
        ))
    return subjects


def _match_case(f: FoundTrial, meta: dict | None, cases: CaseSpec | None,
                by_id: dict[str, EvalCase]) -> tuple[EvalCase | None, str]:
    if cases is None:
        return None, "no case spec given: case-dependent metrics unscored"
    if meta and meta.get("case_id"):
        if meta.get("skill") != cases.suite.skill_name:
            return None, (f"aces trial of skill {meta.get('skill')!r}, but {cases.source} holds cases of "
                          f"{cases.suite.skill_name!r}: no case matched")
        case = by_id.get(str(meta["case_id"]))
        return case, (f"case {meta['case_id']} matched by the task's aces metadata" if case else
                      f"case {meta['case_id']} (aces metadata) is not in {cases.source}")
    keys = [task_key(f.result), f.trial_dir.name.rsplit("__", 1)[0]]
    for k in keys:
        if k in by_id:
            return by_id[k], f"case {k} matched by task name"
    return None, f"no case in {cases.source} has id {keys[0]!r}: case-dependent metrics unscored"


def _workdir(f: FoundTrial, meta: dict | None, given: str | None) -> tuple[str, str]:
    if given:
        return given, "given with --workdir"
    if meta and meta.get("workdir"):
        return str(meta["workdir"]), "from the task's aces metadata"
    toml = _task_toml(f.result, f.trial_dir)
    env_wd = ((toml or {}).get("environment") or {}).get("workdir")
    if isinstance(env_wd, str) and env_wd.startswith("/"):
        return env_wd, "from the task's [environment].workdir"
    inferred = infer_workdir(_instruction(f.trial_dir))
    if inferred:
        return inferred, "inferred from the paths the task instruction names"
    return DECLARED["workdir"].default, "default (nothing names one; pass --workdir)"


def _allowed(meta: dict | None, case: EvalCase | None, given: tuple[str, ...] | None,
             target: str) -> tuple[tuple[str, ...], bool]:
    if given is not None:
        return given, True
    if meta and isinstance(meta.get("allowed_skills"), list):
        return tuple(meta["allowed_skills"]), True
    if case is not None:
        names = ([case.expected_skill] if case.expected_skill else []) + list(case.acceptable_skills)
        return tuple(dict.fromkeys(names)), True
    return (), False
