"""Read a skill folder for scanning without ever raising on bad content.

Everything that can go wrong with a file (binary, not UTF-8, too large, a symlink
that loops or escapes) becomes a ``FileProblem`` the scanner reports; only a SKILL.md
that cannot be read at all makes the skill an error entry. Each file is read once.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aces_bench.inputs import skilltree as tree
from aces_bench.inputs.skills import split_frontmatter  # the one frontmatter parser

SKILL_FILE = "SKILL.md"
MANIFEST_FILE = "MANIFEST.json"
MAX_SKILL_MD_BYTES = 1_000_000
MAX_SCAN_BYTES = 2_000_000
SCRIPT_EXTS = frozenset(
    {
        ".py",
        ".sh",
        ".bash",
        ".zsh",
        ".js",
        ".mjs",
        ".cjs",
        ".ts",
        ".rb",
        ".pl",
        ".ps1",
        ".r",
        ".go",
        ".lua",
        ".php",
    }
)
DOC_EXTS = frozenset({".md", ".markdown", ".txt", ".rst", ".adoc"})
TEXT_EXTS = (
    SCRIPT_EXTS
    | DOC_EXTS
    | frozenset(
        {
            ".json",
            ".yaml",
            ".yml",
            ".toml",
            ".cfg",
            ".ini",
            ".html",
            ".xml",
            ".csv",
            ".tsv",
            ".sql",
            ".env",
            "",
        }
    )
)
_IGNORED_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".pytest_cache",
        "node_modules",
        ".venv",
        ".mypy_cache",
        ".ruff_cache",
    }
)


@dataclass
class FileEntry:
    """One file of the skill: on disk, or only listed in MANIFEST.json (``copied=False``)."""

    rel: str
    size: int
    kind: str  # skill_md | script | reference | other
    copied: bool = True
    text: str | None = None
    problem: str | None = None


@dataclass
class FileProblem:
    rel: str
    pattern_id: str  # S060 symlink, S061 too large, S062 binary / not UTF-8, S063 unreadable or special
    message: str


@dataclass
class SkillDoc:
    root: Path
    skill_id: str
    source: str
    dir_name: str
    text: str | None = None
    error: str | None = None
    frontmatter: dict[str, Any] | None = None
    fm_error: str | None = None  # "missing" or "invalid: <why>"
    fm_error_line: int = 1
    body: str = ""
    body_line: int = 1  # 1-based line of the body's first line in SKILL.md
    files: list[FileEntry] = field(default_factory=list)
    problems: list[FileProblem] = field(default_factory=list)
    has_manifest: bool = False


def file_kind(rel: str) -> str:
    if rel == SKILL_FILE:
        return "skill_md"
    ext = os.path.splitext(rel)[1].lower()
    if ext in SCRIPT_EXTS:
        return "script"
    if ext in DOC_EXTS:
        return "reference"
    return "other"


def decode_text(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) for UTF-8 text, else (None, why it is not text)."""
    if b"\0" in data[:8192]:
        return None, "binary (contains NUL bytes)"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (invalid byte at offset {exc.start})"


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def _read_manifest(path: Path) -> list[dict[str, Any]] | None:
    try:
        data = json.loads(tree.read_regular(path, limit=MAX_SCAN_BYTES))
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(
        isinstance(f, dict) and isinstance(f.get("path"), str) for f in files
    ):
        return None
    return files


def _skip(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in _IGNORED_DIRS
    return name.endswith(".pyc") or name == ".DS_Store"


_LINK_PROBLEMS = {
    tree.OUTSIDE: "points outside the skill (to {target})",
    tree.LOOP: "loops",
    tree.DANGLING: "is dangling (to {target})",
    tree.LINKED_DIR: "is a symlinked folder (to {target}); not followed",
}


def _walk(doc: SkillDoc) -> None:
    """List the folder through ``skilltree.walk``, the walk every skill reader shares: a link
    is judged by its target (never its name) and never followed out; pipes are never opened."""
    manifest: list[dict[str, Any]] | None = None
    for entry in tree.walk(doc.root, skip=_skip):
        rel = entry.rel
        if entry.kind == tree.UNREADABLE:
            if rel == ".":
                raise OSError(entry.target or "cannot list the folder")
            doc.problems.append(FileProblem(rel, "S063", f"folder cannot be listed: {entry.target}"))
            continue
        if entry.kind in _LINK_PROBLEMS:
            what = "symlinked folder" if entry.kind == tree.LINKED_DIR else "symlink"
            doc.problems.append(FileProblem(rel, "S060", f"{what} " + _LINK_PROBLEMS[entry.kind].format(target=entry.target)))
            continue
        if entry.kind == tree.SPECIAL:
            # Opening a FIFO would block the scan; devices and sockets are not skill content.
            doc.problems.append(FileProblem(rel, "S063", "not a regular file (pipe, device or socket); not read"))
            continue
        if rel == MANIFEST_FILE:
            manifest = _read_manifest(entry.path)
            if manifest is not None:
                doc.has_manifest = True
                continue
        _add_file(doc, entry)
    if manifest:
        on_disk = {f.rel for f in doc.files} | {p.rel for p in doc.problems}
        for item in manifest:
            rel = item["path"]
            if rel in on_disk or rel == MANIFEST_FILE:
                continue
            size = item.get("bytes") if isinstance(item.get("bytes"), int) else 0
            doc.files.append(
                FileEntry(
                    rel,
                    size,
                    file_kind(rel),
                    copied=False,
                    problem="listed in MANIFEST.json, body not copied",
                )
            )


def _add_file(doc: SkillDoc, item: tree.TreeEntry) -> None:
    rel, size = item.rel, item.size
    entry = FileEntry(rel, size, file_kind(rel))
    doc.files.append(entry)
    if rel == SKILL_FILE:
        return  # read by load_doc with its own limit
    ext = os.path.splitext(rel)[1].lower()
    if ext not in TEXT_EXTS:
        return  # images, archives, fonts: not text, nothing to scan
    if size > MAX_SCAN_BYTES:
        entry.problem = f"{size:,} bytes, above the {MAX_SCAN_BYTES:,}-byte scan limit"
        doc.problems.append(FileProblem(rel, "S061", f"not scanned: {entry.problem}"))
        return
    try:
        data = tree.read_regular(item.path, limit=MAX_SCAN_BYTES)
    except OSError as exc:
        entry.problem = f"cannot read: {exc.strerror}"
        doc.problems.append(FileProblem(rel, "S063", entry.problem))
        return
    entry.text, why = decode_text(data)
    if why:
        entry.problem = why
        doc.problems.append(FileProblem(rel, "S062", f"not scanned: {why}"))


def load_doc(skill_dir: Path, *, skill_id: str, source: str) -> SkillDoc:
    """Load a skill folder for scanning. Never raises for content problems."""
    skill_dir = Path(skill_dir)
    doc = SkillDoc(
        root=skill_dir, skill_id=skill_id, source=source, dir_name=skill_dir.name
    )
    try:
        _walk(doc)
    except OSError as exc:  # the folder vanished or is unreadable mid-walk
        doc.error = f"cannot list the skill folder: {exc}"
        return doc
    skill_md = next((f for f in doc.files if f.rel == SKILL_FILE), None)
    if skill_md is None:
        doc.error = (
            f"no readable {SKILL_FILE} (missing, or a symlink that loops or escapes)"
        )
        return doc
    if skill_md.size > MAX_SKILL_MD_BYTES:
        doc.error = f"{SKILL_FILE} is {skill_md.size:,} bytes, above the {MAX_SKILL_MD_BYTES:,}-byte limit"
        return doc
    try:
        data = tree.read_regular(skill_dir / SKILL_FILE, limit=MAX_SKILL_MD_BYTES)
    except OSError as exc:
        doc.error = f"cannot read {SKILL_FILE}: {exc.strerror}"
        return doc
    text, why = decode_text(data)
    if text is None:
        doc.error = f"{SKILL_FILE} is {why}; re-save it as UTF-8 text"
        return doc
    text = text.removeprefix("\ufeff")
    skill_md.text = text
    doc.text = text
    doc.frontmatter, doc.fm_error, doc.fm_error_line, doc.body, doc.body_line = (
        split_frontmatter(text)
    )
    return doc
