"""ATIF in: load a trial's trajectory with Harbor's own model, or say why not.

Every ``schema_version`` Harbor's ``Trajectory`` accepts is read (``SUPPORTED_VERSIONS``).
A trajectory continued in other files (``continued_trajectory_ref``, as terminus-2
writes after summarising) is followed and merged, dropping copied context; a
subagent trajectory referenced by file path is loaded and embedded next to the
ones already embedded (``subagent_trajectories``). A missing or unparseable
trajectory gives ``(None, cause)``: the trial is unscored with that cause, never 0.

Agents that leave only a plain-text log get a *synthetic* trajectory from
``synthetic_from_log``: shell commands are recovered from prompt lines, and the
result says it is synthetic in ``extra["aces_synthetic"]`` and in ``notes``.
Of the metric graders' inputs, the trajectory (here) and the retained workspace
(``artifacts.py``) are the only trial files read; the metric graders themselves are
pure functions of them. Other modules of this package read files for their own ends:
``author.py`` (a skill's author graders), ``external.py`` (Harbor job dirs),
``patterns.py`` (the security patterns).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from harbor.models.trajectories import (
    Agent,
    Observation,
    ObservationResult,
    Step,
    ToolCall,
    Trajectory,
)
from pydantic import ValidationError

from aces_bench.core.errors import validation_lines
from aces_bench.inputs.trialfiles import MAX_TRIAL_FILE_BYTES, is_regular, read_trial_file

SUPPORTED_VERSIONS: tuple[str, ...] = get_args(Trajectory.model_fields["schema_version"].annotation)
TRAJECTORY_FILE = "trajectory.json"
SYNTHETIC_KEY = "aces_synthetic"
SYNTHETIC_NOTE = (
    "SYNTHETIC TRAJECTORY: converted by aces-bench from a plain-text agent log. Tool calls were "
    "recovered from shell prompt lines and may be incomplete; no model messages or token counts."
)
LOG_SUFFIXES = (".txt", ".log")
MAX_CONTINUATIONS = 100
_PROMPT = re.compile(r"^(?:[\w.-]+@[\w.-]+:[^\s$#]*\s?[$#]|\$) (?P<cmd>\S.*)$")
_EXIT = re.compile(r"^\[?(?:exit(?: code|_code| status)?|return code)\s*[:=]?\s*(?P<code>-?\d+)\]?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class LoadedTrajectory:
    """A trial's trajectory, or the reason there is none, and notes on what was resolved."""

    trajectory: Trajectory | None
    error: str | None
    source: Path | None
    synthetic: bool = False
    notes: tuple[str, ...] = ()


def parse_trajectory(data: str | bytes | dict[str, Any], *, where: str = "<trajectory>") -> tuple[Trajectory | None, str | None]:
    """Validate ATIF data with Harbor's model: ``(trajectory, None)`` or ``(None, cause)``."""
    if not isinstance(data, dict):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            return None, f"{where}: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        except UnicodeDecodeError:
            return None, f"{where}: not UTF-8 text"
    if not isinstance(data, dict):
        return None, f"{where}: an ATIF trajectory is a JSON object, got {type(data).__name__}"
    version = data.get("schema_version")
    if version is not None and version not in SUPPORTED_VERSIONS:
        return None, (f"{where}: schema_version {version!r} is not an ATIF version Harbor reads "
                      f"(accepted: {', '.join(SUPPORTED_VERSIONS)})")
    try:
        return Trajectory.model_validate(data), None
    except ValidationError as err:
        lines = validation_lines(err)
        more = f" (+{len(lines) - 5} more)" if len(lines) > 5 else ""
        return None, f"{where}: not a valid ATIF trajectory: " + "; ".join(lines[:5]) + more


def load_trajectory(path: Path) -> tuple[Trajectory | None, str | None]:
    """Read one trajectory file: ``(trajectory, None)`` or ``(None, stated cause)``.

    Read through ``trialfiles.read_trial_file`` (the trial wrote it): a FIFO, socket,
    device or symlink is not opened, and a file past the 16 MiB host-side cap is not
    parsed (half a JSON document is no trajectory); each gives its cause.
    """
    path = Path(path)
    read = read_trial_file(path, limit=MAX_TRIAL_FILE_BYTES)
    if read.problem == "missing":
        return None, f"{path}: no trajectory file"
    if read.problem is not None:
        return None, f"{path}: {read.problem}"
    if read.truncated:
        return None, (f"{path}: {read.size:,} bytes, above the {MAX_TRIAL_FILE_BYTES:,}-byte host-side read cap; "
                      "not parsed")
    raw = read.data
    if not raw.strip():
        return None, f"{path}: empty file"
    return parse_trajectory(raw, where=str(path))


def _merge_continuations(traj: Trajectory, folder: Path, notes: list[str]) -> Trajectory:
    """Append the steps of continuation files, renumbered, skipping copied context."""
    if not traj.continued_trajectory_ref:
        return traj
    steps = list(traj.steps)
    seen: list[str] = []
    current = traj
    while current.continued_trajectory_ref and len(seen) < MAX_CONTINUATIONS:
        ref = current.continued_trajectory_ref
        if ref in seen:
            notes.append(f"continuation {ref} refers back to itself: stopped")
            break
        seen.append(ref)
        inside = _inside(folder, ref)
        if inside is None:
            notes.append(f"continuation {ref!r} is outside the agent folder: not read")
            break
        nxt, err = load_trajectory(inside)
        if nxt is None:
            notes.append(f"continuation not merged: {err}")
            break
        steps += [s for s in nxt.steps if not s.is_copied_context]
        current = nxt
    renumbered = [s if s.step_id == i + 1 else s.model_copy(update={"step_id": i + 1}) for i, s in enumerate(steps)]
    extra = {**(traj.extra or {}), "aces_continuations": seen}
    return traj.model_copy(update={"steps": renumbered, "extra": extra, "continued_trajectory_ref": None})


def _embed_file_subagents(traj: Trajectory, folder: Path, notes: list[str]) -> Trajectory:
    """Load subagent trajectories referenced by path and embed them."""
    embedded = {t.trajectory_id for t in traj.subagent_trajectories or []}
    added: list[Trajectory] = []
    for step in traj.steps:
        for r in step.observation.results if step.observation else []:
            for ref in r.subagent_trajectory_ref or []:
                if ref.trajectory_id in embedded or not ref.trajectory_path:
                    continue
                if "://" in ref.trajectory_path:
                    notes.append(f"subagent {ref.trajectory_path}: remote reference not fetched")
                    continue
                inside = _inside(folder, ref.trajectory_path)
                if inside is None:
                    notes.append(f"subagent {ref.trajectory_path!r} is outside the agent folder: not read")
                    continue
                sub, err = load_trajectory(inside)
                if sub is None:
                    notes.append(f"subagent not loaded: {err}")
                    continue
                tid = ref.trajectory_id or sub.trajectory_id or f"file:{ref.trajectory_path}"
                embedded.add(tid)
                added.append(sub.model_copy(update={"trajectory_id": tid}))
    if not added:
        return traj
    return traj.model_copy(update={"subagent_trajectories": list(traj.subagent_trajectories or []) + added})


def resolve_trajectory(path: Path) -> LoadedTrajectory:
    """Load ``path`` and resolve its continuations and file-referenced subagents."""
    path = Path(path)
    traj, err = load_trajectory(path)
    if traj is None:
        return LoadedTrajectory(None, err, path)
    notes: list[str] = []
    traj = _merge_continuations(traj, path.parent, notes)
    traj = _embed_file_subagents(traj, path.parent, notes)
    return LoadedTrajectory(traj, None, path, is_synthetic(traj), tuple(notes))


def load_trial_trajectory(trial_dir: Path) -> LoadedTrajectory:
    """The trajectory of a Harbor trial dir (``<trial>/agent/trajectory.json``).

    Without that file, the largest plain-text log in ``agent/`` is converted to a
    synthetic trajectory; without either, the result carries the cause.
    """
    agent_dir = Path(trial_dir) / "agent"
    main = agent_dir / TRAJECTORY_FILE
    if os.path.lexists(main):  # a FIFO or a link there is reported, never opened
        return resolve_trajectory(main)
    logs = sorted((p for p in _entries(agent_dir) if is_regular(p) and p.suffix in LOG_SUFFIXES),
                  key=lambda p: (-p.lstat().st_size, p.name))
    if not logs:
        return LoadedTrajectory(None, f"{agent_dir}: no {TRAJECTORY_FILE} and no plain-text agent log", main)
    log = logs[0]
    read = read_trial_file(log)
    if read.problem is not None:
        return LoadedTrajectory(None, f"{log}: {read.problem}", log)
    text = read.text()
    if not text.strip():
        return LoadedTrajectory(None, f"{log}: agent log is empty and there is no {TRAJECTORY_FILE}", log)
    traj = synthetic_from_log(text, agent_name=log.stem, source=str(log))
    notes = [f"synthetic trajectory from {log.name}"] + ([read.note] if read.note else [])
    return LoadedTrajectory(traj, None, log, True, tuple(notes))


def _entries(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return [Path(e.path) for e in it]
    except OSError:
        return []


def _inside(folder: Path, ref: str) -> Path | None:
    """``folder / ref`` when it stays inside ``folder`` (a reference is data the trial wrote)."""
    if os.path.isabs(ref) or ".." in Path(ref).parts:
        return None
    return Path(folder) / ref


def is_synthetic(traj: Trajectory) -> bool:
    return bool((traj.extra or {}).get(SYNTHETIC_KEY))


def synthetic_from_log(text: str, *, agent_name: str = "unknown", source: str | None = None) -> Trajectory:
    """Convert a plain-text agent log into a synthetic ATIF trajectory.

    Lines that look like shell prompts (``$ cmd``, ``user@host:/dir# cmd``) become
    ``bash`` tool calls (the reference agent's convention); the lines after them are
    their output, and an ``exit code: N`` line their exit status. Text before the
    first command is an agent message. The trajectory is marked synthetic.
    """
    steps: list[Step] = []
    preamble: list[str] = []
    cur: dict[str, Any] | None = None

    def flush() -> None:
        nonlocal cur
        if cur is None:
            return
        n = len(steps) + 1
        call_id = f"synthetic-{n}"
        extra = {"exit_code": cur["exit"]} if cur["exit"] is not None else None
        steps.append(Step(
            step_id=n, source="agent", message="",
            tool_calls=[ToolCall(tool_call_id=call_id, function_name="bash", arguments={"command": cur["cmd"]})],
            observation=Observation(results=[ObservationResult(
                source_call_id=call_id, content="\n".join(cur["out"]).strip("\n"), extra=extra)]),
            extra={SYNTHETIC_KEY: True},
        ))
        cur = None

    for line in text.splitlines():
        m = _PROMPT.match(line)
        if m:
            flush()
            cur = {"cmd": m.group("cmd"), "out": [], "exit": None}
            continue
        if cur is None:
            preamble.append(line)
            continue
        e = _EXIT.match(line.strip())
        if e:
            cur["exit"] = int(e.group("code"))
        else:
            cur["out"].append(line)
    flush()
    intro = "\n".join(preamble).strip()
    if intro or not steps:
        first = Step(step_id=1, source="agent", message=intro or "(empty log)", extra={SYNTHETIC_KEY: True})
        steps = [first] + [s.model_copy(update={"step_id": i + 2}) for i, s in enumerate(steps)]
    return Trajectory(
        schema_version=SUPPORTED_VERSIONS[-1],
        session_id=None,
        agent=Agent(name=agent_name, version="unknown"),
        steps=steps,
        notes=SYNTHETIC_NOTE,
        extra={SYNTHETIC_KEY: True, "aces_adapter": "plain-text-log/1", "aces_source": source},
    )
