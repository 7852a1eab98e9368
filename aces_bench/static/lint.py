"""Advisory script lint: ruff for Python, shellcheck for shell, when on PATH.

Findings never change the structural score. A missing tool is reported as
"not_run", never as a clean result.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence

from aces_bench.static.loader import SkillDoc
from aces_bench.static.models import LintFinding, ToolRun

_SHELL_EXTS = (".sh", ".bash")
_TIMEOUT_SEC = 120


def _files(
    docs: Sequence[SkillDoc], exts: tuple[str, ...]
) -> dict[str, tuple[int, str]]:
    """Absolute path -> (doc index, path relative to the skill) of readable scripts."""
    out = {}
    for i, d in enumerate(docs):
        for f in d.files:
            if f.text is not None and f.rel.lower().endswith(exts):
                out[os.path.join(os.path.realpath(d.root), f.rel)] = (i, f.rel)
    return out


def _run(cmd: list[str]) -> tuple[str | None, str]:
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=_TIMEOUT_SEC, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    return proc.stdout, proc.stderr.strip()[:300]


def _ruff(
    files: dict[str, tuple[int, str]], per_doc: list[list[LintFinding]]
) -> ToolRun:
    exe = shutil.which("ruff")
    if exe is None:
        return ToolRun(tool="ruff", status="not_run", detail="ruff is not on PATH")
    if not files:
        return ToolRun(tool="ruff", status="ran", detail="no readable Python scripts")
    out, err = _run(
        [
            exe,
            "check",
            "--isolated",
            "--no-cache",
            "--exit-zero",
            "--output-format",
            "json",
            *files,
        ]
    )
    try:
        items = json.loads(out or "")
    except ValueError:
        return ToolRun(
            tool="ruff", status="failed", detail=err or "ruff printed no JSON"
        )
    for it in items:
        hit = files.get(os.path.realpath(it.get("filename", "")))
        if hit:
            line = (it.get("location") or {}).get("row")
            per_doc[hit[0]].append(
                LintFinding(
                    tool="ruff",
                    code=str(it.get("code") or "syntax"),
                    file=hit[1],
                    line=line,
                    message=it.get("message", ""),
                )
            )
    return ToolRun(tool="ruff", status="ran", detail=f"{len(files)} file(s)")


def _shellcheck(
    files: dict[str, tuple[int, str]], per_doc: list[list[LintFinding]]
) -> ToolRun:
    exe = shutil.which("shellcheck")
    if exe is None:
        return ToolRun(
            tool="shellcheck", status="not_run", detail="shellcheck is not on PATH"
        )
    if not files:
        return ToolRun(
            tool="shellcheck", status="ran", detail="no readable shell scripts"
        )
    out, err = _run([exe, "--format", "json", *files])
    try:
        items = json.loads(out or "")
    except ValueError:
        return ToolRun(
            tool="shellcheck",
            status="failed",
            detail=err or "shellcheck printed no JSON",
        )
    for it in items:
        hit = files.get(os.path.realpath(it.get("file", "")))
        if hit:
            per_doc[hit[0]].append(
                LintFinding(
                    tool="shellcheck",
                    code=f"SC{it.get('code')}",
                    file=hit[1],
                    line=it.get("line"),
                    message=it.get("message", ""),
                )
            )
    return ToolRun(tool="shellcheck", status="ran", detail=f"{len(files)} file(s)")


def lint_docs(
    docs: Sequence[SkillDoc],
) -> tuple[list[list[LintFinding]], list[ToolRun]]:
    """Lint findings per doc (same order) and how each tool ran, one tool call per corpus."""
    per_doc: list[list[LintFinding]] = [[] for _ in docs]
    runs = [
        _ruff(_files(docs, (".py",)), per_doc),
        _shellcheck(_files(docs, _SHELL_EXTS), per_doc),
    ]
    return per_doc, runs
