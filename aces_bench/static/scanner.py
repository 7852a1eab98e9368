"""Tier 1 and the security scan for one skill, and discovery of skills under paths."""

from __future__ import annotations

import gc
import glob
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aces_bench.core.errors import SkillError
from aces_bench.static import (  # noqa: F401  (register rules)
    checks_correctness,
    checks_discoverability,
    checks_efficiency,
    checks_reliability,
    checks_skillevaluator,
)
from aces_bench.static.catalog import Catalog, catalog
from aces_bench.static.context import CHECKS, approx_tokens, build_ctx, words_tokens
from aces_bench.static.loader import SKILL_FILE, SkillDoc, load_doc
from aces_bench.static.models import Finding, SkillResult, TokenCount
from aces_bench.static.scoring import (
    STRICT_SEVERITY,
    dimension_scores,
    gate,
    grade,
    overall,
)
from aces_bench.static.security import scan_doc

_SKIP_DIRS = frozenset(
    {".git", "__pycache__", "node_modules", ".venv", ".pytest_cache"}
)


@dataclass(frozen=True)
class SkillRef:
    path: Path
    skill_id: str
    source: str


def _has_skill_md(d: str) -> bool:
    try:
        return os.path.isfile(os.path.join(d, SKILL_FILE))
    except OSError:
        return False


def discover(paths: Iterable[str | Path]) -> list[SkillRef]:
    """Skill folders under each path (a skill, a folder of skills at any depth, or a glob).

    ``skill_id`` is the folder's path relative to the scanned root; ``source`` is its
    parent path there (the catalog it came from), or the parent folder's name.
    Raises SkillError naming a path that does not exist or holds no skill.
    """
    refs: dict[str, SkillRef] = {}
    for raw in paths:
        raw = str(raw)
        matches = sorted(glob.glob(raw)) if glob.has_magic(raw) else [raw]
        if not matches:
            raise SkillError(
                "glob matched nothing",
                where=raw,
                fix="check the pattern, or quote it so the shell does not expand it",
            )
        for m in matches:
            found = _discover_one(Path(m))
            if not found and not glob.has_magic(raw):
                raise SkillError(
                    f"no {SKILL_FILE} in this folder or any folder below it",
                    where=m,
                    fix=f"point at a skill folder (holding {SKILL_FILE}) or at a folder of skills",
                )
            for ref in found:
                refs.setdefault(os.path.realpath(ref.path), ref)
    if not refs:
        raise SkillError(
            "no skills found",
            where=", ".join(map(str, paths)),
            fix=f"point at folders holding {SKILL_FILE}",
        )
    return sorted(refs.values(), key=lambda r: r.skill_id)


def _discover_one(path: Path) -> list[SkillRef]:
    if not path.exists():
        raise SkillError(
            "path does not exist",
            where=path,
            fix="check the path; scan takes skill folders, folders of skills or globs",
        )
    if path.is_file():
        if path.name == SKILL_FILE:
            path = path.parent
        else:
            raise SkillError(
                "not a folder",
                where=path,
                fix=f"point at the folder holding {SKILL_FILE}",
            )
    if _has_skill_md(str(path)):
        return [SkillRef(path, path.name, path.resolve().parent.name)]
    out = []
    for dirpath, dirnames, _ in os.walk(path, followlinks=False):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in _SKIP_DIRS and not os.path.islink(os.path.join(dirpath, d))
        )
        if dirpath != str(path) and _has_skill_md(dirpath):
            rel = os.path.relpath(dirpath, path).replace(os.sep, "/")
            parent = os.path.dirname(rel)
            out.append(SkillRef(Path(dirpath), rel, parent or path.resolve().name))
            dirnames[:] = []  # a skill's own subfolders are its files, not more skills
    return out


def _content_hash(doc: SkillDoc) -> str:
    h = hashlib.sha256()
    for f in sorted(doc.files, key=lambda f: f.rel):
        h.update(f.rel.encode())
        h.update(b"\0")
        h.update(f.text.encode("utf-8") if f.text is not None else str(f.size).encode())
        h.update(b"\0")
    return h.hexdigest()


def scan_doc_result(
    doc: SkillDoc,
    *,
    gate_at: float = 70.0,
    strict: bool = False,
    cat: Catalog | None = None,
) -> SkillResult:
    """Tier 1 score, findings and security findings for a loaded skill."""
    cat = cat or catalog()
    base = {
        "skill": doc.dir_name,
        "skill_id": doc.skill_id,
        "source": doc.source,
        "path": str(doc.root),
    }
    if doc.text is None:
        return SkillResult(
            **base, status="error", error=doc.error or "SKILL.md could not be read"
        )
    ctx = build_ctx(doc, cat)
    findings: list[Finding] = []
    for rule in cat.rules:
        severity = STRICT_SEVERITY if strict and rule.contract else rule.severity
        for hit in CHECKS[rule.id](ctx):
            findings.append(
                Finding(
                    rule_id=rule.id,
                    rule_name=rule.name,
                    dimension=rule.dimension,
                    severity=severity,
                    file=hit.file,
                    line=hit.line,
                    message=hit.message,
                    fix=rule.fix,
                )
            )
    security, note = scan_doc(doc)
    not_evaluable = dict(ctx.not_evaluable)
    if note:
        not_evaluable["security"] = note
    dims = dimension_scores(findings, cat)
    score = overall(dims, cat.score_decimals)
    declared = {k: ctx.declared(k) for k in cat.contract}
    missing = [k for k, ok in declared.items() if not ok]
    passed, reasons = gate(score, gate_at, security, missing, strict)
    text = doc.text
    all_text = sum(
        f.size for f in doc.files if f.kind in ("skill_md", "script", "reference")
    )
    return SkillResult(
        **{**base, "skill": ctx.name or doc.dir_name},
        status="ok",
        content_hash=_content_hash(doc),
        score=score,
        grade=grade(score, cat),
        passed_gate=passed,
        gate_reasons=reasons,
        dimensions=dims,
        findings=findings,
        not_evaluable=not_evaluable,
        security=security,
        tokens=TokenCount(
            skill_md=approx_tokens(text),
            skill_md_words_estimate=words_tokens(text),
            all_text=all_text // 4,
        ),
        frontmatter_declared=declared,
        frontmatter_top_level={k: ctx.declared_top_level(k) for k in cat.contract},
        files_present=len(doc.files),
        files_readable=sum(1 for f in doc.files if f.copied and f.problem is None),
    )


def scan_skill(
    ref: SkillRef,
    *,
    gate_at: float = 70.0,
    strict: bool = False,
    cat: Catalog | None = None,
) -> tuple[SkillResult, SkillDoc]:
    """Load and scan one skill; never raises for the skill's content."""
    doc = load_doc(ref.path, skill_id=ref.skill_id, source=ref.source)
    return scan_doc_result(doc, gate_at=gate_at, strict=strict, cat=cat), doc


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Hold off the cyclic garbage collector for one skill's scan.

    Parsing a SKILL.md allocates ~700 tokens per skill and the collector's passes over
    them (and over everything already imported) took ~15% of a corpus scan. Reference
    counting still frees what one skill drops; cycles wait until the next skill, so
    memory stays bounded by one skill's garbage. The previous state is restored, so a
    caller that had disabled the collector keeps it disabled.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def scan_refs(
    refs: list[SkillRef],
    *,
    gate_at: float = 70.0,
    strict: bool = False,
    progress: Callable[[int, int, str], None] | None = None,
    cat: Catalog | None = None,
) -> list[tuple[SkillResult, SkillDoc]]:
    """Scan skills in order. An unexpected exception in one skill becomes that skill's
    error entry (with the exception type) instead of stopping the corpus."""
    out = []
    for i, ref in enumerate(refs):
        try:
            with _gc_paused():
                out.append(scan_skill(ref, gate_at=gate_at, strict=strict, cat=cat))
        except (OSError, RecursionError, ValueError) as exc:
            doc = SkillDoc(
                root=ref.path,
                skill_id=ref.skill_id,
                source=ref.source,
                dir_name=ref.path.name,
                error=f"{type(exc).__name__}: {exc}",
            )
            out.append((scan_doc_result(doc, cat=cat), doc))
        if progress:
            progress(i + 1, len(refs), ref.skill_id)
    return out
