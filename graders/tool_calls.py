"""One view of an ATIF trajectory's tool calls, the same for every harness.

Harnesses name their tools differently (``bash``, ``Bash``, ``run_shell_command``,
``bash_command``, ``exec_command``...), put paths under different argument keys and
report failure differently (an ``Exit Code:`` line, ``[exit_code] 1``, an
``is_error`` flag in ``extra``). ``build_view`` reads a trajectory once into a
``TraceView``: ordered ``Call`` records with the paths each call read, wrote,
listed or executed, its output and whether it failed. Every deterministic metric
reads this view, never the raw trajectory, so a trajectory is walked once.

Embedded subagent trajectories are included: their calls follow the parent step
that delegated to them (or come last when no step references them), tagged with
the subagent's ``trajectory_id``.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from harbor.models.trajectories import Trajectory

from aces_bench.agents.profiles import profile_skill_roots, tool_kind
from aces_bench.graders.shell import parse_command, resolve

CallKind = Literal["shell", "read", "write", "edit", "list", "search", "activate", "web", "delegate", "control", "other"]

_PATH_KEYS = ("file_path", "path", "filePath", "filename", "file", "target_file", "absolute_path",
              "notebook_path", "dir_path", "directory", "dirPath")
_SKILL_KEYS = ("name", "skill", "skill_name", "skillName", "command")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)

_EXIT_LINE = re.compile(
    r"(?:^|\n)\s*(?:\[exit_code\]|exit[ _]code|exit status|process exited with code|returncode|return code)"
    r"\s*[:=]?\s*\(?(-?\d+)",
    re.IGNORECASE,
)
_EXIT_JSON = re.compile(r'"(?:exit_code|exitCode|returncode)"\s*:\s*(-?\d+)')
_ERROR_FLAG = re.compile(r"(?:^|\n)\[error\] tool reported failure|^\s*(?:Error|ERROR)\b[:\s](?!\s*\(none\))")
# Used only when a shell call reports no exit status at all (terminal screens).
_FAILURE_TEXT = re.compile(
    r"Traceback \(most recent call last\)|: command not found|No such file or directory|Permission denied|"
    r"ModuleNotFoundError|SyntaxError:|(?:^|\n)(?:bash|sh): .*: (?:not found|cannot)"
)


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call, normalised. ``failed`` is None when the harness gave no signal."""

    index: int
    step_id: int
    call_id: str
    tool: str
    kind: CallKind
    text: str
    output: str
    exit_code: int | None
    failed: bool | None
    status_source: Literal["exit_code", "flag", "inferred", "none"]
    reads: tuple[str, ...] = ()
    peeks: tuple[str, ...] = ()
    """SKILL.md reads that returned only the frontmatter: discovery, not activation."""
    writes: tuple[str, ...] = ()
    lists: tuple[str, ...] = ()
    execs: tuple[str, ...] = ()
    imports: tuple[str, ...] = ()
    """Files a Python program run by the call would import modules from (candidates; see ``shell``)."""
    copies: tuple[tuple[str, str], ...] = ()
    """(source, destination) of files the call copied."""
    files: tuple[tuple[str, str], ...] = ()
    """(path, text) of files the call wrote whole (a write tool, a heredoc, ``echo``/``printf`` redirected)."""
    appends: tuple[tuple[str, str], ...] = ()
    """(path, text) the call appended to files (``>>``, ``tee -a``)."""
    removes: tuple[str, ...] = ()
    """Paths the call deleted (``rm``, ``unlink``; also in ``writes``)."""
    written: str = ""
    flags: frozenset[str] = frozenset()
    activated: str | None = None
    subagent: str | None = None

    @property
    def where(self) -> str:
        """Human location: ``step 4`` or ``subagent s1 step 2``."""
        return f"subagent {self.subagent} step {self.step_id}" if self.subagent else f"step {self.step_id}"


@dataclass(frozen=True, slots=True)
class TraceView:
    calls: tuple[Call, ...]
    responses: tuple[tuple[int, str], ...]
    n_steps: int
    synthetic: bool = False

    @property
    def final_message(self) -> str | None:
        return self.responses[-1][1] if self.responses else None


@dataclass(frozen=True, slots=True)
class SkillRef:
    skill: str
    rel: str  # path inside the skill folder; "" for the folder itself


def _skill_path_regex(skills_dir: str) -> re.Pattern[str]:
    return _skill_path_regex_for(skills_dir, profile_skill_roots())


@lru_cache(maxsize=32)
def _skill_path_regex_for(skills_dir: str, profile_roots: tuple[str, ...]) -> re.Pattern[str]:
    roots = [re.escape(posixpath.normpath(skills_dir))] if skills_dir else []
    roots += list(profile_roots)  # every harness profile's skill folders, then the generic ones
    return re.compile(r"^(?:" + "|".join(roots) + r")/(?P<skill>[^/]+)(?:/(?P<rel>.*))?$")


def skill_ref(path: str, skills_dir: str) -> SkillRef | None:
    """Which skill folder a path is in: the skills dir or a harness's skill copy."""
    m = _skill_path_regex(skills_dir).match(path)
    if m is None or m.group("skill") in ("*", "."):
        return None
    return SkillRef(m.group("skill"), m.group("rel") or "")


def skill_glob_ref(path: str, skills_dir: str) -> SkillRef | None:
    """A read through a glob over skill folders (``/skills/*/SKILL.md``): the pattern as ``skill``."""
    m = _skill_path_regex(skills_dir).match(path)
    if m is None or not any(ch in m.group("skill") for ch in "*?["):
        return None
    return SkillRef(m.group("skill"), m.group("rel") or "")


def content_text(content: Any) -> str:
    """Text of a message or observation: a string, or the text parts of a list."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(p.text for p in content if getattr(p, "text", None))


def _kind(tool: str, args: dict[str, Any], agent: str | None = None) -> CallKind:
    """The call's kind from the harness profiles (``agents.profiles.tool_kind``: the trajectory's own agent first)."""
    kind = tool_kind(tool, agent)
    if kind == "editor":  # one text-editor tool, its ``command`` argument says which
        sub = str(args.get("command", ""))
        return "read" if sub == "view" else "write" if sub == "create" else "edit"
    return kind  # type: ignore[return-value]


def _command_text(args: dict[str, Any]) -> str:
    for key in ("command", "cmd", "keystrokes", "script", "input", "code"):
        v = args.get(key)
        if isinstance(v, str):
            return v
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            if len(v) >= 3 and v[1] in ("-c", "-lc") and posixpath.basename(v[0]) in ("bash", "sh", "zsh"):
                return v[2]
            return " ".join(v)
    return ""


def _paths(args: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in _PATH_KEYS:
        v = args.get(key)
        if isinstance(v, str) and v:
            out.append(v)
    v = args.get("paths") or args.get("file_paths")
    if isinstance(v, list):
        out += [p for p in v if isinstance(p, str)]
    return out


def _status(output: str, call_extra: dict | None, result_extra: dict | None, kind: CallKind):
    """(exit_code, failed, source) from structured flags first, then the output text."""
    for extra in (result_extra, call_extra):
        if not extra:
            continue
        for key in ("exit_code", "exitCode", "returncode", "return_code", "exit_status"):
            if isinstance(extra.get(key), int) and not isinstance(extra.get(key), bool):
                return extra[key], extra[key] != 0, "exit_code"
        for key in ("is_error", "tool_result_is_error", "tool_use_is_error"):
            if isinstance(extra.get(key), bool):
                return None, extra[key], "flag"
        if extra.get("status") in ("error", "failed", "failure"):
            return None, True, "flag"
    if output:
        exit_lines = list(_EXIT_LINE.finditer(output))
        m = exit_lines[-1] if exit_lines else None  # the last report is the command's own
        if m is None:
            m = _EXIT_JSON.search(output)
        if m is not None:
            code = int(m.group(1))
            return code, code != 0, "exit_code"
        if kind != "shell" and _ERROR_FLAG.search(output[:400]):
            return None, True, "flag"
        if kind == "shell" and _FAILURE_TEXT.search(output):
            return None, True, "inferred"
    return None, (False if kind not in ("shell", "other") else None), "none"


def _activated_name(args: dict[str, Any]) -> str | None:
    for key in _SKILL_KEYS:
        v = args.get(key)
        if isinstance(v, str) and v.strip():
            return v.strip().lstrip("/").split()[0]
    return None


class _Builder:
    def __init__(self, workdir: str):
        self.workdir = workdir
        self.cwd = workdir
        self.calls: list[Call] = []
        self.responses: list[tuple[int, str]] = []
        self.n_steps = 0

    def walk(self, traj: Trajectory, subagent: str | None = None, agent: str | None = None) -> None:
        # Tool names are read by the (sub)trajectory's own agent's profile (ATIF agent.name).
        agent = getattr(traj.agent, "name", None) or agent
        subs = {t.trajectory_id: t for t in (traj.subagent_trajectories or []) if t.trajectory_id}
        used: set[str] = set()
        for step in traj.steps:
            if step.is_copied_context:
                continue
            self.n_steps += 1
            if step.source == "agent" and subagent is None:
                text = content_text(step.message)
                if text.strip():
                    self.responses.append((step.step_id, text))
            results = step.observation.results if step.observation else []
            by_id = {r.source_call_id: r for r in results if r.source_call_id}
            loose = [r for r in results if not r.source_call_id]
            calls = step.tool_calls or []
            for k, tc in enumerate(calls):
                res = by_id.get(tc.tool_call_id)
                if res is None and loose and k == len(calls) - 1:
                    # A shared, unattributed output (batched terminal commands) goes to
                    # the last call: that is the screen the agent saw after the batch.
                    res = loose[0]
                self._add(step.step_id, tc, res, subagent, agent)
            for r in results:
                for ref in r.subagent_trajectory_ref or []:
                    sub = subs.get(ref.trajectory_id) if ref.trajectory_id else None
                    if sub is not None and ref.trajectory_id not in used:
                        used.add(ref.trajectory_id)
                        self.walk(sub, ref.trajectory_id, agent)
        for tid, sub in subs.items():
            if tid not in used:
                self.walk(sub, tid, agent)

    def _add(self, step_id: int, tc: Any, res: Any, subagent: str | None, agent: str | None = None) -> None:
        args = tc.arguments or {}
        kind = _kind(tc.function_name, args, agent)
        output = content_text(res.content) if res is not None else ""
        exit_code, failed, source = _status(output, tc.extra, res.extra if res is not None else None, kind)
        fields: dict[str, Any] = {}
        text = ""
        if kind == "shell" or (kind == "other" and _command_text(args)):
            text = _command_text(args)
            facts = parse_command(text, self.cwd)
            self.cwd = facts.cwd
            fields = {"reads": facts.reads, "writes": facts.writes, "lists": facts.lists, "execs": facts.execs,
                      "flags": facts.flags, "imports": facts.imports, "copies": facts.copies, "files": facts.written,
                      "appends": facts.appended, "removes": facts.removed}
            kind = "shell"
        elif kind == "activate":
            name = _activated_name(args)
            text = name or ""
            fields = {"activated": name}
        else:
            paths = [resolve(p, self.workdir) for p in _paths(args)]
            text = " ".join(paths) if paths else _first_string(args)
            if kind == "edit" and not paths:
                patch = _command_text(args) or _first_string(args)
                paths = [resolve(p.strip(), self.workdir) for p in _PATCH_FILE.findall(patch)]
                text = " ".join(paths) or text
            written = ""
            if kind in ("write", "edit"):
                written = "\n".join(
                    str(args[k]) for k in ("content", "new_string", "newString", "new_str", "file_text", "input")
                    if isinstance(args.get(k), str)
                )
            op = {"read": "reads", "write": "writes", "edit": "writes", "list": "lists", "search": "reads"}.get(kind)
            if op:
                fields[op] = tuple(paths)
            fields["written"] = written
            if kind == "write" and len(paths) == 1 and written:
                fields["files"] = ((paths[0], written),)
        reads = fields.get("reads", ())
        if reads and output and frontmatter_only(output):
            peeks = tuple(r for r in reads if posixpath.basename(r).lower() == "skill.md")
            if peeks:
                fields["peeks"] = peeks
                fields["reads"] = tuple(r for r in reads if r not in peeks)
        self.calls.append(Call(
            index=len(self.calls), step_id=step_id, call_id=tc.tool_call_id, tool=tc.function_name, kind=kind,
            text=text, output=output, exit_code=exit_code, failed=failed, status_source=source,
            subagent=subagent, **fields,
        ))


_FM_LINE = re.compile(r"^(?:---\s*|[A-Za-z_][\w.-]*\s*:.*|\s+\S.*|\s*-\s.*|\[exit code: -?\d+\])$")
_FM_KEY = re.compile(r"^(?:name|description)\s*:", re.M)


def frontmatter_only(output: str) -> bool:
    """True when a SKILL.md read showed nothing but YAML frontmatter.

    Harnesses discover skills by peeking at the frontmatter (name, description);
    the body - the instructions - is what activation means. Judged from what the
    agent saw, so it holds whatever command did the peeking.
    """
    lines = [ln for ln in output.splitlines() if ln.strip()]
    return bool(lines) and _FM_KEY.search(output) is not None and all(_FM_LINE.match(ln) for ln in lines)


def _first_string(args: dict[str, Any]) -> str:
    for v in args.values():
        if isinstance(v, str):
            return v[:500]
    return json.dumps(args, default=str)[:500] if args else ""


def build_view(traj: Trajectory, workdir: str) -> TraceView:
    """Walk ``traj`` (and its embedded subagents) once into a ``TraceView``.

    Shell calls share one working directory that starts at ``workdir`` and follows
    ``cd``, as in the persistent shell most harnesses keep.
    """
    b = _Builder(workdir)
    b.walk(traj)
    extra = traj.extra or {}
    return TraceView(
        calls=tuple(b.calls),
        responses=tuple(b.responses),
        n_steps=b.n_steps,
        synthetic=bool(extra.get("aces_synthetic")),
    )
