"""Author graders: a skill's own reward contract, run on the host after each trial.

Contract (what a skill author writes):

- **Where**: ``<skill>/evals/graders/<name>.py`` or ``<name>.sh``. Each file is one
  metric, recorded as ``author:<name>``. Files whose name starts with ``_`` or ``.``
  are helpers, not graders; other suffixes are ignored. ``.py`` runs with the Python
  that runs aces-bench, ``.sh`` with ``bash`` (``sh`` when bash is absent).
- **When and where it runs**: after the trial, in both conditions (the paired
  difference needs both), never in the agent's sandbox but in a sandbox of the same
  kind of its own (bubblewrap, see ``aces_bench.backends.bwrap``): no network, no host
  environment, the host's ``/usr``, ``/etc`` (secrets covered) and ``/lib*`` and the
  Python that runs aces-bench read-only, and nothing else of the host. Its working
  directory is a read-only *copy* of the retained final workspace
  (``TrialRecord.artifacts_dir``: the answer file *and* every intermediate file the
  agent left), so a grader can neither change what is graded nor the retained
  artifacts; it can write only its ``HOME`` and ``TMPDIR`` (discarded) and its
  verdict on stdout, which is parsed as data. Without bubblewrap the metric is
  unscored with the reason (an author grader never runs unsandboxed on the host).
- **Inputs** (environment variables; the host environment is *not* inherited, so no
  judge or provider credential reaches author code; paths are the sandbox's):
  ``ACES_WORKSPACE`` (the copy, = cwd), ``ACES_WORKSPACE_RETAINED`` (``1``/``0``),
  ``ACES_FINAL_ANSWER`` (file with the final answer, empty when none),
  ``ACES_TRAJECTORY`` (copy of the ATIF trajectory, unset when there is none),
  ``ACES_CASE`` (the case as JSON, unset without a case spec), ``ACES_CONTEXT``
  (JSON: skill, case id, condition, trial name, reward), ``ACES_SKILL_DIR`` (the
  skill folder, for reference data), ``ACES_CONDITION``, ``ACES_CASE_ID``, ``HOME``
  and ``TMPDIR`` (private scratch folders), ``PATH``.
- **Output**: exit 0 and print either a number in 0..1 or a JSON object
  ``{"score": 0..1, "passed": bool, "details": ...}`` (``score`` or ``passed``
  required; ``passed`` alone gives score 1 or 0). The whole stdout is tried first,
  then its last non-empty line, so a grader may log before its verdict.
- **Failure**: a non-zero exit, a timeout (default ``AUTHOR_TIMEOUT_SEC``), or
  output outside the contract leaves that metric unscored with the cause; never 0.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aces_bench.backends.copyout import copy_out
from aces_bench.cases import EvalCase
from aces_bench.core.errors import AcesError, EvalsError, validation_lines
from aces_bench.core.io import remove_tree
from aces_bench.graders.redact import redact, redact_value
from aces_bench.records.results import Evidence, MetricResult

GRADERS_DIR = "evals/graders"
PREFIX = "author:"
AUTHOR_TIMEOUT_SEC = 60.0
TAIL_CHARS = 600
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True, slots=True)
class AuthorGrader:
    name: str
    path: Path
    argv: tuple[str, ...]
    content_hash: str

    @property
    def metric(self) -> str:
        return PREFIX + self.name


@dataclass(frozen=True)
class AuthorContext:
    """What one trial gives its author graders (all read, never written)."""

    skill: str
    skill_dir: Path | None
    case: EvalCase | None
    case_id: str
    condition: str
    trial_name: str | None
    reward: float | None
    workspace: Path | None
    trajectory_path: Path | None
    final_answer: str | None


class AuthorReply(BaseModel):
    """The JSON object an author grader prints."""

    model_config = ConfigDict(extra="forbid")

    score: float | None = Field(default=None, ge=0, le=1)
    passed: bool | None = None
    details: Any = None

    @model_validator(mode="after")
    def _one_verdict(self) -> AuthorReply:
        if self.score is None and self.passed is None:
            raise ValueError("give 'score' (0..1) or 'passed' (true/false)")
        return self


def _interpreter(suffix: str) -> tuple[str, ...]:
    if suffix == ".py":
        # -E: no PYTHON* variable counts; -s: no user site (nothing the trial wrote);
        # -B: no bytecode written. The grader's own folder stays importable (helpers).
        return (sys.executable, "-E", "-s", "-B")
    return (shutil.which("bash") or "/bin/sh",)


def discover_author_graders(skill_dir: Path | None) -> list[AuthorGrader]:
    """The author graders of a skill, sorted by name; [] when it has none.

    Raises EvalsError when two graders share a name (``x.py`` and ``x.sh``) or a name
    is not a safe identifier (it becomes a metric and a column label).
    """
    if skill_dir is None:
        return []
    folder = Path(skill_dir) / GRADERS_DIR
    if not folder.is_dir():
        return []
    found: dict[str, AuthorGrader] = {}
    for p in sorted(folder.iterdir()):
        if not p.is_file() or p.suffix not in (".py", ".sh") or p.name.startswith(("_", ".")):
            continue
        name = p.stem
        if not _SAFE_NAME.match(name):
            raise EvalsError(f"author grader name {name!r} is not a safe identifier", where=p,
                             fix="rename the file with letters, digits, '-', '_' and '.' only")
        if name in found:
            raise EvalsError(f"two author graders are named {name!r} ({found[name].path.name} and {p.name})",
                             where=folder, fix="rename one of them: each file is one metric, author:<name>")
        digest = hashlib.sha256(p.read_bytes()).hexdigest()[:12]
        found[name] = AuthorGrader(name, p.resolve(), (*_interpreter(p.suffix), str(p.resolve())), digest)
    return [found[n] for n in sorted(found)]


def parse_reply(stdout: str) -> AuthorReply:
    """The verdict in a grader's stdout; ValueError with a message fit for ``unscored_reason``."""
    text = stdout.strip()
    if not text:
        raise ValueError("printed nothing on stdout")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    candidates = [text] if len(lines) == 1 else [text, lines[-1]]
    last_error = ""
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            last_error = f"not a number or a JSON object: {_tail(lines[-1], 120)!r}"
            continue
        if isinstance(data, bool):
            return AuthorReply(passed=data)
        if isinstance(data, (int, float)):
            data = {"score": data}
        if not isinstance(data, dict):
            last_error = f"printed JSON {type(data).__name__}, expected a number or an object"
            continue
        try:
            return AuthorReply.model_validate(data)
        except ValidationError as err:
            raise ValueError("reply outside the contract: " + "; ".join(validation_lines(err))) from None
    raise ValueError(last_error)


def _tail(text: str, n: int = TAIL_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= n else "…" + text[-n:]


def _set_read_only(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root, topdown=False):
        for f in filenames:
            p = Path(dirpath, f)
            if not p.is_symlink():
                p.chmod(0o444)
        Path(dirpath).chmod(0o555)


def _set_writable(root: Path) -> None:
    for dirpath, _, _ in os.walk(root):
        Path(dirpath).chmod(0o755)


# Where the staged inputs appear inside the grader's sandbox.
SANDBOX_BASE = "/aces"


@contextmanager
def staged_inputs(ctx: AuthorContext, *, base: str | None = None) -> Iterator[tuple[Path, dict[str, str]]]:
    """A private folder holding the read-only workspace copy and input files; yields (cwd, env).

    ``base``: the path the folder is shown at inside a sandbox; the env then names the
    sandbox's paths (the yielded cwd stays the host path of the copy).
    """
    tmp = Path(tempfile.mkdtemp(prefix="aces-author-"))
    seen = str(tmp) if base is None else base
    try:
        ws = tmp / "workspace"
        ws.mkdir()
        if ctx.workspace is not None and Path(ctx.workspace).is_dir():
            # What a trial left is copied as plain data: links as links (evidence, not paths
            # to follow), never a FIFO, socket or device; sizes and time capped.
            copy_out(Path(ctx.workspace), ws)
        inputs = tmp / "inputs"
        inputs.mkdir()
        for d in ("home", "tmp"):
            (tmp / d).mkdir()
        answer = inputs / "final_answer.txt"
        answer.write_text(ctx.final_answer or "", encoding="utf-8")
        context = {"skill": ctx.skill, "case_id": ctx.case_id, "condition": ctx.condition,
                   "trial_name": ctx.trial_name, "reward": ctx.reward,
                   "workspace_retained": ctx.workspace is not None and Path(ctx.workspace).is_dir()}
        (inputs / "context.json").write_text(json.dumps(context, indent=2), encoding="utf-8")
        env = {
            "PATH": os.pathsep.join(dict.fromkeys([str(Path(sys.executable).parent), "/usr/local/bin",
                                                   "/usr/bin", "/bin"])),
            "HOME": f"{seen}/home",
            "TMPDIR": f"{seen}/tmp",
            "LANG": "C.UTF-8",
            "ACES_WORKSPACE": f"{seen}/workspace",
            "ACES_WORKSPACE_RETAINED": "1" if context["workspace_retained"] else "0",
            "ACES_FINAL_ANSWER": f"{seen}/inputs/final_answer.txt",
            "ACES_CONTEXT": f"{seen}/inputs/context.json",
            "ACES_CONDITION": ctx.condition,
            "ACES_CASE_ID": ctx.case_id,
        }
        if ctx.skill_dir is not None:
            env["ACES_SKILL_DIR"] = str(ctx.skill_dir) if base is None else f"{seen}/skill"
        traj = Path(ctx.trajectory_path) if ctx.trajectory_path is not None else None
        if traj is not None and traj.is_file():
            copy_out(traj.parent, inputs, only=traj.name, rename="trajectory.json")
            env["ACES_TRAJECTORY"] = f"{seen}/inputs/trajectory.json"
        if ctx.case is not None:
            (inputs / "case.json").write_text(ctx.case.model_dump_json(indent=2), encoding="utf-8")
            env["ACES_CASE"] = f"{seen}/inputs/case.json"
        _set_read_only(ws)
        _set_read_only(inputs)
        yield ws, env
    finally:
        _set_writable(tmp)
        remove_tree(tmp, ignore_errors=True)


def _unscored(g: AuthorGrader, reason: str, details: dict[str, Any]) -> MetricResult:
    reason = redact(reason)
    return MetricResult(metric=g.metric, score=None, unscored_reason=reason, grader="author",
                        grader_version=g.content_hash, details=redact_value(details),
                        evidence=[Evidence(check=g.metric, passed=None, detail=reason)])


async def run_author_grader(
    g: AuthorGrader, ctx: AuthorContext, *, timeout_sec: float = AUTHOR_TIMEOUT_SEC
) -> MetricResult:
    """Run one author grader for one trial, in its own sandbox; never raises for the grader's behaviour."""
    from aces_bench.backends.bwrap import ExecTimeout, find_tools

    _, missing = find_tools()
    with staged_inputs(ctx, base=SANDBOX_BASE) as (cwd, env):
        details: dict[str, Any] = {"script": str(g.path), "workspace_retained": env["ACES_WORKSPACE_RETAINED"] == "1",
                                   "sandbox": "bubblewrap, no network"}
        if missing:
            return _unscored(g, f"{g.path.name} not run: author graders run sandboxed and need "
                                f"{', '.join(missing)} (apt-get install bubblewrap util-linux)", details)
        started = time.monotonic()
        try:
            async with _grader_sandbox(g, ctx, cwd.parent) as box:
                out = await box.exec([*g.argv[:-1], f"{SANDBOX_BASE}/grader/{g.path.name}"],
                                     cwd=env["ACES_WORKSPACE"], env=env, timeout_sec=timeout_sec)
        except ExecTimeout:
            details["duration_sec"] = round(time.monotonic() - started, 3)
            return _unscored(g, f"{g.path.name} timed out after {timeout_sec:g}s", details)
        except (OSError, AcesError) as exc:
            return _unscored(g, f"could not start {g.path.name}: {getattr(exc, 'strerror', None) or exc}", details)
        details["duration_sec"] = round(time.monotonic() - started, 3)
        details["exit_code"] = out.return_code
        stdout = out.stdout.decode("utf-8", errors="replace")
        stderr = out.stderr.decode("utf-8", errors="replace")
        if stderr.strip():
            details["stderr_tail"] = _tail(stderr)
        if out.return_code != 0:
            return _unscored(g, f"{g.path.name} exited with code {out.return_code}: "
                                f"{_tail(stderr or stdout, 300) or 'no output'}", details)
        try:
            reply = parse_reply(stdout)
        except ValueError as exc:
            return _unscored(g, f"{g.path.name} {exc}", details)
    score = reply.score if reply.score is not None else (1.0 if reply.passed else 0.0)
    details.update({"passed": reply.passed, "details": reply.details})
    verdict = "" if reply.passed is None else (" passed" if reply.passed else " failed")
    evidence = [Evidence(check=g.metric, passed=reply.passed, detail=f"{g.path.name}{verdict}, score {score:g}")]
    return MetricResult(metric=g.metric, score=score, grader="author", grader_version=g.content_hash,
                        details=redact_value(details), evidence=evidence)


@asynccontextmanager
async def _grader_sandbox(g: AuthorGrader, ctx: AuthorContext, staged: Path):
    """A bubblewrap sandbox for one grader run: the staged inputs read-only at /aces."""
    from aces_bench.backends.bwrap import Bind, Sandbox
    from aces_bench.backends.rootfs import make_skeleton

    root = staged / "root"
    root.mkdir()
    make_skeleton(root)
    base = PurePosixPath(SANDBOX_BASE)
    binds = [Bind(staged / "workspace", base / "workspace", read_only=True),
             Bind(staged / "inputs", base / "inputs", read_only=True),
             Bind(staged / "home", base / "home"),
             Bind(staged / "tmp", base / "tmp"),
             Bind(g.path.parent.resolve(), base / "grader", read_only=True)]
    if ctx.skill_dir is not None and Path(ctx.skill_dir).is_dir():
        binds.append(Bind(Path(ctx.skill_dir).resolve(), base / "skill", read_only=True))
    # The Python that runs aces-bench (a venv and the interpreter it points at), read-only.
    for prefix in dict.fromkeys(Path(p).resolve() for p in (sys.prefix, sys.base_prefix)):
        if not str(prefix).startswith(("/usr", "/lib", "/bin")):
            binds.append(Bind(prefix, PurePosixPath(str(prefix)), read_only=True))
    box = Sandbox(root, tuple(binds), network=False, hostname="aces-author-grader")
    await box.prepare()
    for scratch in ("home", "tmp"):  # writable by root inside (its host id), nothing else is
        box.adopt(staged / scratch)
    await box.start()
    try:
        yield box
    finally:
        await box.stop()


async def run_author_graders(
    graders: list[AuthorGrader], ctx: AuthorContext, *, timeout_sec: float = AUTHOR_TIMEOUT_SEC,
    limit: asyncio.Semaphore | None = None,
) -> dict[str, MetricResult]:
    """Every author grader for one trial, keyed ``author:<name>``; ``limit`` bounds processes in flight."""

    async def one(g: AuthorGrader) -> MetricResult:
        if limit is None:
            return await run_author_grader(g, ctx, timeout_sec=timeout_sec)
        async with limit:
            return await run_author_grader(g, ctx, timeout_sec=timeout_sec)

    results = await asyncio.gather(*(one(g) for g in graders))
    return {r.metric: r for r in results}
