"""Skill folders: discovery, SKILL.md frontmatter and content hashes."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from aces_bench.core.errors import AcesError, SkillError
from aces_bench.core.io import load_yaml
from aces_bench.inputs.skilltree import read_regular, skill_files

SKILL_FILE = "SKILL.md"
MAX_SKILL_MD_BYTES = 1_000_000
MAX_STAGED_FILE_BYTES = 50_000_000  # one file copied into every with-skill task
MAX_STAGED_TOTAL_BYTES = 200_000_000  # the whole staged skill folder
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FENCE_ONLY = re.compile(r"\A---[ \t]*\r?\n")
NOT_STAGED = frozenset({"evals", "evaluations"})
"""Top-level folders that are evaluation assets as a whole (cases, fixtures, graders, native tasks;
``evaluations/`` is where openai/skills keeps one case per JSON file, with its success criteria)."""
_EVAL_ROOT_FILES = re.compile(
    r"^(?:eval\.md|eval\.config|(?:evals?|trigger[-_]?evals?)(?:[-_.][\w.-]*)?\.(?:json|jsonl|ya?ml))$", re.IGNORECASE)
"""Files at the skill's root that hold cases or expected answers: EVAL.md, eval.config, an evals or
trigger-evals file written beside SKILL.md instead of under evals/."""
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")  # \Z: $ would pass "name\n"
# C0 and C1 controls and DEL: the TOML writer Harbor uses mangles them silently (ESC -> "x1b").
CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class Skill(BaseModel):
    """A loaded skill folder. ``content_hash`` covers every file the folder stages."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    path: Path
    version: str | None = None
    frontmatter: dict[str, Any]
    body: str
    content_hash: str


def iter_files(root: Path) -> list[Path]:
    """Files under ``root`` in a stable order, skipping caches and VCS folders.

    Listed by ``skilltree.walk``, the one walk over folders aces-bench did not write: a
    symlink pointing outside ``root`` (whatever its name), a link loop, a pipe, socket or
    device is refused with a one-line SkillError; staging one would copy host files into
    a task or hang.
    """
    return skill_files(Path(os.path.realpath(root)))


def evaluation_asset(rel: str | Path) -> str | None:
    """Why the skill-relative path ``rel`` is an evaluation asset, kept out of every sandbox; None if it is not.

    The one staging rule: whatever holds cases, expected answers, fixtures or graders
    (``evals/`` whole, with its fixtures, graders and native tasks; openai/skills'
    ``evaluations/``; ``EVAL.md`` and
    ``eval.config`` at the root; an evals or trigger-evals file at the root) never
    reaches any arm's sandbox - with-skill, baseline, null, placebo, forced, decoys,
    support skills, plugins - nor a ``dataset create`` draft run. A case's own
    fixtures reach its workspace through the case (``files``), nothing else. Every
    path that copies a skill folder asks this function (``staged_files``, and
    ``skilltree.copy_tree(..., exclude=evaluation_asset)``).
    """
    parts = Path(rel).parts
    if not parts:
        return None
    if parts[0] in NOT_STAGED:
        return f"{parts[0]}/ holds the evaluation cases, fixtures and graders"
    if len(parts) == 1 and _EVAL_ROOT_FILES.match(parts[0]):
        return f"{parts[0]} holds evaluation cases or expected answers"
    return None


def staged_files(root: Path) -> list[Path]:
    """The files an agent sees: everything but the evaluation assets (``evaluation_asset``).

    Staging them would hand the agent the expected answers.
    """
    root = Path(os.path.realpath(root))
    files = [p for p in iter_files(root) if evaluation_asset(p.relative_to(root)) is None]
    total = 0
    for p in files:
        size = p.stat().st_size
        if size > MAX_STAGED_FILE_BYTES:
            raise SkillError(
                f"{p.relative_to(root)} is {size:,} bytes, above the {MAX_STAGED_FILE_BYTES:,}-byte limit for a staged file",
                where=root,
                fix="keep large data out of the skill folder (fetch it at run time, or ship a smaller sample)",
            )
        total += size
    if total > MAX_STAGED_TOTAL_BYTES:
        raise SkillError(
            f"the staged files total {total:,} bytes, above the {MAX_STAGED_TOTAL_BYTES:,}-byte limit",
            where=root,
            fix="move large material out of the skill folder; every with-skill task copies it",
        )
    return files


def hash_tree(root: Path) -> str:
    """sha256 over relative paths and bytes of every staged file."""
    h = hashlib.sha256()
    root = Path(os.path.realpath(root))
    for p in staged_files(root):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(read_regular(p))
        h.update(b"\0")
    return h.hexdigest()


def split_frontmatter(
    text: str,
) -> tuple[dict[str, Any] | None, str | None, int, str, int]:
    """The one SKILL.md frontmatter parser: (frontmatter, error, error_line, body, body_line).

    ``error`` is ``"missing"`` when there is no frontmatter block, or ``"invalid: ..."``
    when the block is not a YAML mapping; the body is then the text after the block.
    The static scan reports these as findings; ``parse_frontmatter`` refuses them.
    """
    return _split(text)[:5]


def _split(text: str) -> tuple[dict[str, Any] | None, str | None, int, str, int, BaseException | None]:
    """``split_frontmatter`` plus the YAML (or alias-bomb) exception behind an invalid block."""
    m = _FRONTMATTER.match(text)
    if not m:
        if _FENCE_ONLY.match(text):
            return None, "invalid: the opening '---' has no closing '---' line", 1, text, 1, None
        return None, "missing", 1, text, 1, None
    body = text[m.end() :]
    body_line = text.count("\n", 0, m.end()) + 1
    try:
        data = load_yaml(m.group(1))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        return None, f"invalid: {getattr(exc, 'problem', None) or exc}", line, body, body_line, exc
    except (RecursionError, ValueError) as exc:
        return None, f"invalid: {type(exc).__name__}", 1, body, body_line, exc
    if not isinstance(data, dict):
        return None, f"invalid: frontmatter is a YAML {type(data).__name__}, not a mapping", 2, body, body_line, None
    return data, None, 1, body, body_line, None


def parse_frontmatter(text: str, where: Path) -> tuple[dict[str, Any], str]:
    """Split SKILL.md into its YAML frontmatter mapping and the markdown body (a SkillError when it has none)."""
    data, error, _, body, _, exc = _split(text)
    if error is not None and exc is None and not error.startswith("invalid: frontmatter is a YAML"):
        raise SkillError(
            "SKILL.md has no YAML frontmatter",
            where=where,
            fix="start the file with '---', a 'name:' and a 'description:' line, and '---'",
        )
    if isinstance(exc, yaml.YAMLError):
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 2}" if mark is not None else ""
        raise SkillError(
            f"frontmatter is not valid YAML{line}: {getattr(exc, 'problem', exc)}",
            where=where,
            fix="fix the YAML between the '---' lines (quote values containing ':')",
        ) from None
    if exc is not None:
        raise exc
    if data is None:
        raise SkillError(
            "frontmatter must be a YAML mapping of keys to values",
            where=where,
            fix="write 'name: ...' and 'description: ...' between the '---' lines",
        )
    return data, body


def read_text_file(
    path: Path,
    *,
    limit: int = MAX_SKILL_MD_BYTES,
    error: type[AcesError] = SkillError,
    size_fix: str = "split the file or move large material into references/",
) -> str:
    """Read a UTF-8 text file (a BOM is dropped) with clear errors for size, binary and encoding."""
    try:
        data = read_regular(path, limit=limit + 1)  # never blocks on a pipe planted in its place
    except OSError as exc:
        raise error(f"cannot read the file: {exc.strerror}", where=path,
                    fix="make it a readable regular file (not a pipe, device or link loop)") from None
    if len(data) > limit:
        size = path.stat().st_size
        raise error(f"file is {size:,} bytes, above the {limit:,}-byte limit", where=path, fix=size_fix)
    if b"\0" in data:
        raise error("file is binary (contains NUL bytes)", where=path, fix="use a UTF-8 text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"file is not UTF-8 (byte {exc.start})", where=path, fix="re-save the file as UTF-8") from None


def load_skill(path: Path) -> Skill:
    """Load and validate one skill folder."""
    path = Path(path)
    if not path.is_dir():
        raise SkillError("skill folder does not exist", where=path, fix="give the path of a folder holding SKILL.md")
    skill_md = path / SKILL_FILE
    if not skill_md.is_file():
        raise SkillError(
            f"no {SKILL_FILE} in the skill folder",
            where=path,
            fix=f"add {SKILL_FILE} with name/description frontmatter, or point at a folder that holds skills",
        )
    content_hash = hash_tree(path)  # walks the folder first: a SKILL.md linked out of it is refused unread
    text = read_text_file(skill_md)
    fm, body = parse_frontmatter(text, skill_md)
    for key in ("name", "description"):
        value = fm.get(key)
        if not isinstance(value, str) or not value.strip():
            raise SkillError(
                f"frontmatter key '{key}' is missing or empty",
                where=f"{skill_md}:{key}",
                fix=f"add a non-empty '{key}:' line to the frontmatter",
            )
    name = fm["name"].strip()
    if not SAFE_NAME.match(name):
        raise SkillError(
            f"skill name {name!r} is not a safe identifier",
            where=f"{skill_md}:name",
            fix="use letters, digits, '-', '_' and '.' only",
        )
    version = fm.get("version")
    if version is not None and CONTROL_CHARS.search(str(version)):
        raise SkillError(
            f"frontmatter 'version' {str(version)!r} holds a control character",
            where=f"{skill_md}:version",
            fix="write the version with printable characters only (e.g. 1.2.0)",
        )
    return Skill(
        name=name,
        description=" ".join(fm["description"].split()),
        path=Path(os.path.realpath(path)),
        version=str(version) if version is not None else None,
        frontmatter=fm,
        body=body,
        content_hash=content_hash,
    )


def discover_skill_dirs(path: Path) -> list[Path]:
    """A skill folder gives itself; a folder of skills gives each child holding SKILL.md."""
    path = Path(path)
    if not path.exists():
        raise SkillError("path does not exist", where=path, fix="check the path given in skill.paths")
    if (path / SKILL_FILE).is_file():
        return [path]
    if path.is_dir():
        children = sorted(p for p in path.iterdir() if p.is_dir() and (p / SKILL_FILE).is_file())
        if children:
            return children
    raise SkillError(
        f"neither a skill folder (no {SKILL_FILE}) nor a folder of skill folders",
        where=path,
        fix=f"point at a folder holding {SKILL_FILE}, or at a folder whose subfolders do",
    )
