"""The ``skillevaluator`` profile: SkillEvaluator 0.2.0's Tier 1 quality rules.

Re-implemented from SkillEvaluator's documented behaviour so that `aces-bench scan
--profile skillevaluator` scores a folder as SkillEvaluator does (the ACES paper's scan).
The rules deliberately keep SkillEvaluator's literal semantics (substring tests for
``## Purpose``, the folder name rather than the frontmatter name, one deduction per
rule); where they differ from it, docs/static.md says so and why.

Every rule here reads one shared view of the skill (``_view``), built once per skill.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from aces_bench.core.io import load_yaml
from aces_bench.static.context import Ctx, Hit, at_skill_md, check

_FM = re.compile(r"^---\s*\n(.*?)\n---", re.DOTALL)
_W = "A-Za-z0-9_"
# SkillEvaluator's tag test: an opening/closing/self-closing tag, or an unclosed one at the end.
_XML_TAG = re.compile(
    r"</?[A-Za-z][A-Za-z0-9_-]*(?:\s[^<>]*)?/?>|</?[A-Za-z][A-Za-z0-9_-]*\s[^<>]*$"
)
# Characters outside ASCII that re.IGNORECASE takes for an ASCII letter (İ ı ſ K).
_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"


class _Words:
    """A case-insensitive regex of ASCII words, searched only where one of ``needles``
    (lowercase substrings every match contains) occurs in the lowercased text.

    A match consists of ASCII letters, which ``str.lower`` maps onto the needle, unless
    the text holds one of the four non-ASCII letters the regex also folds to ASCII; then
    the regex runs unfiltered. Same answers as the bare regex, and most texts (which
    hold none of the words) cost one ``lower()`` and a few substring tests instead of a
    regex step at every character.
    """

    def __init__(self, regex: re.Pattern[str], needles: tuple[str, ...]):
        self.regex, self.needles = regex, needles

    def search(self, text: str) -> re.Match[str] | None:
        if not any(ch in text for ch in _FOLDS_TO_ASCII):
            low = text.lower()
            if not any(n in low for n in self.needles):
                return None
        return self.regex.search(text)


_ERROR_HANDLING = _Words(
    re.compile(
        r"\b(?:errors?|exceptions?|invalid|fail(?:s|ed|ure|ures|ing)?|"
        r"validat(?:e|es|ed|ing|ion|ions))\b",
        re.IGNORECASE,
    ),
    ("error", "exception", "invalid", "fail", "validat"),
)
_EDGE = re.compile(r"^[\x00-\x20]+|[\x00-\x20]+$")
_WINDOWS_PATH = re.compile(r"(?:scripts|references|assets)\\[\w\\]+")
# SkillEvaluator's link regex less its leading "!?": an image's "!" is outside the group
# and the match ends where it would, so finditer gives the same targets, and a regex
# that starts with a literal "[" is searched ~20x faster.
_MD_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
_API_DOC = re.compile(
    r"\bimport\s+[A-Za-z_][A-Za-z0-9_.]*|\bfrom\s+[A-Za-z_][A-Za-z0-9_.]*\s+import\b"
    r"|\bapi\b|\bmodules?\b|\blibrar(?:y|ies)\b|\bpackages?\b|\bclasses?\b|\bfunctions?\b",
    re.IGNORECASE,
)
_EXCLUDED_DIRS = frozenset(
    "scripts references assets eval evals .evals results .results versions .versions "
    "tests examples docs resources templates design-system __pycache__ .git .venv "
    "node_modules".split()
)
RESOURCE_DIRS = ("assets", "templates", "design-system", "resources")
MAX_TOKENS = 5000


def _terms(*words: str) -> _Words:
    """Any of the words or phrases, not inside another word (ASCII word characters)."""
    alt = "|".join(re.escape(w) for w in words)
    return _Words(re.compile(rf"(?<![{_W}])(?:{alt})(?![{_W}])", re.IGNORECASE), words)


_RESERVED = _terms("anthropic", "claude")
_TRIGGER = _terms("use", "when", "for", "helps", "allows")
_VAGUE = _terms("something", "things", "stuff", "various", "general")
_PERSON = _terms("i can", "i will", "you can", "you should", "your", "my", "we can")
_GENERIC = _terms("data", "files", "documents", "project", "manage", "handle", "process")
_NEGATIVE = _terms("not for", "do not use", "instead use", "except when", "not when")
_RESOURCE_WORDS = _terms("template", "asset", "design", "style", "css", "html", "resource")
_ACTION = _terms("use", "call", "run", "execute", "pass", "set", "add", "mark", "update", "keep")
_CORPORATE = _terms("utilize", "facilitate", "leverage", "paradigm", "synergy")
_VAGUE_STEMS = frozenset({"doc", "file", "data", "info", "misc", "temp"})
_NON_DOC = frozenset({".py", ".sh", ".json", ".csv", ".yaml", ".yml", ".toml"})


@dataclass(frozen=True)
class _View:
    content: str  # the whole SKILL.md, frontmatter included, newlines normalised
    fm: dict[str, Any] | None
    skill_type: str  # script-based | lib-based | resource-based | guide-only | hybrid
    on_disk: frozenset[str]  # files present (not merely listed in MANIFEST.json)
    lib_dir: str | None


def _frontmatter(content: str) -> dict[str, Any] | None:
    m = _FM.match(content)
    if not m:
        return None
    try:
        data = load_yaml(m.group(1))
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def _top_dirs(root: str) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(root) if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _view(ctx: Ctx) -> _View:
    v = ctx.memo.get("skillevaluator")
    if v is not None:
        return v
    doc = ctx.doc
    content = (doc.text or "").replace("\r\n", "\n").replace("\r", "\n")
    on_disk = frozenset(f.rel for f in doc.files if f.copied)
    root = str(doc.root)
    has_scripts = any(
        posixpath.dirname(r) == "scripts" and r.endswith((".py", ".sh")) for r in on_disk
    )
    lib_dir = next(
        (
            d
            for d in _top_dirs(root)
            if d not in _EXCLUDED_DIRS
            and not d.startswith(".")
            and os.path.exists(os.path.join(root, d, "__init__.py"))
        ),
        None,
    )
    has_resources = any(os.path.exists(os.path.join(root, d)) for d in RESOURCE_DIRS)
    if has_scripts and (lib_dir or has_resources):
        kind = "hybrid"
    elif has_scripts:
        kind = "script-based"
    elif lib_dir:
        kind = "lib-based"
    elif has_resources:
        kind = "resource-based"
    else:
        kind = "guide-only"
    listed = [f for f in doc.files if f.kind == "script" and not f.copied]
    if listed and not has_scripts:
        ctx.not_evaluable["SE-TYPE"] = (
            f"{len(listed)} script(s) listed in MANIFEST.json but not copied; skill type "
            f"detected from the files on disk ({kind}), as SkillEvaluator does, so the "
            "script-based rules (SE-C006, SE-C007, SE-R002) were not applied"
        )
    v = _View(content, _frontmatter(content), kind, on_disk, lib_dir)
    ctx.memo["skillevaluator"] = v
    return v


def _hit(message: str) -> list[Hit]:
    return at_skill_md(1, message)


def _fm_str(fm: dict[str, Any] | None, key: str) -> str:
    # str() as SkillEvaluator does: a null description reads as "None".
    return str(fm.get(key, "")).strip() if fm else ""


def _local_path(href: str) -> str | None:
    href = _EDGE.sub("", href)
    try:
        parsed = urlsplit(href)
    except ValueError:
        return None
    if parsed.scheme or parsed.netloc:
        return None
    path = unquote(parsed.path).replace("\\", "/")
    if not path or path.startswith("/"):
        return None
    try:
        if urlsplit(path).scheme:
            return None
    except ValueError:
        return None
    return posixpath.normpath(path)


def _links(text: str) -> list[str]:
    return [m.group(1) for m in _MD_LINK.finditer(text)]


# ---------------------------------------------------------------- correctness


@check("SE-C001")
def se_xml_in_frontmatter(ctx: Ctx) -> list[Hit]:
    fm = _view(ctx).fm or {}
    for key, val in fm.items():
        if key not in ("name", "description") and _XML_TAG.search(str(val)):
            return _hit(f"XML tags in frontmatter field '{key}' (potential prompt injection)")
    return []


@check("SE-C002")
def se_name_format(ctx: Ctx) -> list[Hit]:
    name = _fm_str(_view(ctx).fm, "name")
    if name and not re.match(r"^[a-z0-9-]+$", name):
        return _hit(f"Invalid name format: '{name}' (lowercase/numbers/hyphens only)")
    return []


@check("SE-C003")
def se_name_reserved(ctx: Ctx) -> list[Hit]:
    name = _fm_str(_view(ctx).fm, "name")
    return _hit("Name contains reserved word (anthropic, claude)") if name and _RESERVED.search(name) else []


@check("SE-C004")
def se_name_xml(ctx: Ctx) -> list[Hit]:
    name = _fm_str(_view(ctx).fm, "name")
    return _hit("Name contains XML tags") if name and _XML_TAG.search(name) else []


@check("SE-C005")
def se_description_xml(ctx: Ctx) -> list[Hit]:
    desc = _fm_str(_view(ctx).fm, "description")
    return _hit("Description contains XML tags") if desc and _XML_TAG.search(desc) else []


def _scripted(v: _View) -> bool:
    return v.skill_type in ("script-based", "hybrid")


@check("SE-C006")
def se_scripts_table(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if _scripted(v) and "## Available Scripts" not in v.content and "| Script |" not in v.content:
        return _hit("No documented scripts in table format")
    return []


@check("SE-C007")
def se_run_script(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    return _hit("Instructions don't mention 'run_script'") if _scripted(v) and "run_script" not in v.content else []


@check("SE-C008")
def se_lib_pyproject(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if v.skill_type == "lib-based" and "pyproject.toml" not in v.on_disk:
        return _hit("Lib-based skill missing pyproject.toml")
    return []


@check("SE-C009")
def se_lib_api_docs(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if v.skill_type == "lib-based" and not _API_DOC.search(v.content):
        return _hit("Lib-based skill lacks API/import documentation")
    return []


def _present_resources(ctx: Ctx) -> list[str]:
    return [d for d in RESOURCE_DIRS if os.path.exists(os.path.join(str(ctx.doc.root), d))]


@check("SE-C010")
def se_lib_resources(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if v.skill_type != "lib-based":
        return []
    present = _present_resources(ctx)
    if present and not _RESOURCE_WORDS.search(v.content):
        return _hit(
            f"Lib-based skill has resource directories ({', '.join(present)}) "
            "but SKILL.md lacks resource documentation"
        )
    return []


@check("SE-C011")
def se_resource_docs(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if v.skill_type == "resource-based" and not _RESOURCE_WORDS.search(v.content):
        return _hit("Resource-based skill lacks documentation of available resources")
    return []


@check("SE-C012")
def se_guide_short(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if v.skill_type != "guide-only":
        return []
    n = sum(1 for ln in v.content.split("\n") if ln.strip())
    return _hit(f"Guide-only skill has very little content ({n} lines)") if n < 20 else []


@check("SE-C013")
def se_no_examples(ctx: Ctx) -> list[Hit]:
    c = _view(ctx).content
    if "```" in c or "Example:" in c or "## Examples" in c:
        return []
    return _hit("No examples provided")


@check("SE-C014")
def se_windows_paths(ctx: Ctx) -> list[Hit]:
    return _hit("Windows-style paths detected") if _WINDOWS_PATH.search(_view(ctx).content) else []


@check("SE-C015")
def se_readme_linked(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if "README.md" in v.on_disk and any(
        (p := _local_path(t)) is not None and p.casefold() == "readme.md" for t in _links(v.content)
    ):
        return _hit("SKILL.md references README.md (pulls human-facing docs into agent context)")
    return []


def _spec_missing(ctx: Ctx, field_name: str, nested: bool) -> list[Hit]:
    fm = _view(ctx).fm
    if not fm:
        return []
    where = (fm.get("metadata") or {}) if nested else fm
    if not isinstance(where, dict) or where.get(field_name) is None:
        label = f"metadata.{field_name}" if nested else field_name
        return _hit(f"SKILL_SPEC recommended field missing: '{label}'")
    return []


@check("SE-C016")
def se_version_missing(ctx: Ctx) -> list[Hit]:
    return _spec_missing(ctx, "version", nested=False)


@check("SE-C017")
def se_author_missing(ctx: Ctx) -> list[Hit]:
    return _spec_missing(ctx, "author", nested=True)


@check("SE-C018")
def se_tags_missing(ctx: Ctx) -> list[Hit]:
    return _spec_missing(ctx, "tags", nested=True)


# ---------------------------------------------------------------- discoverability


def _desc(ctx: Ctx) -> str:
    return _fm_str(_view(ctx).fm, "description")


@check("SE-D001")
def se_description_short(ctx: Ctx) -> list[Hit]:
    d = _desc(ctx)
    return _hit(f"Description too short ({len(d)} chars, recommend 50-150)") if d and len(d) < 20 else []


@check("SE-D002")
def se_description_long(ctx: Ctx) -> list[Hit]:
    d = _desc(ctx)
    return _hit(f"Description very long ({len(d)} chars, recommend 50-150)") if len(d) > 200 else []


@check("SE-D003")
def se_description_no_when(ctx: Ctx) -> list[Hit]:
    d = _desc(ctx)
    return _hit("Description doesn't mention WHEN to use this skill") if d and not _TRIGGER.search(d) else []


@check("SE-D004")
def se_description_vague(ctx: Ctx) -> list[Hit]:
    d = _desc(ctx)
    return _hit("Description contains vague words") if d and _VAGUE.search(d) else []


@check("SE-D005")
def se_description_person(ctx: Ctx) -> list[Hit]:
    d = _desc(ctx)
    return _hit("Description uses first/second person") if d and _PERSON.search(d) else []


@check("SE-D006")
def se_description_broad(ctx: Ctx) -> list[Hit]:
    d = _desc(ctx)
    if len(d) > 100 and _GENERIC.search(d) and not _NEGATIVE.search(d):
        return _hit("Broad description without negative triggers may cause over-triggering")
    return []


@check("SE-D007")
def se_no_purpose(ctx: Ctx) -> list[Hit]:
    return [] if "## Purpose" in _view(ctx).content else _hit("No '## Purpose' section")


@check("SE-D008")
def se_dir_name_short(ctx: Ctx) -> list[Hit]:
    sn = ctx.doc.dir_name
    return _hit(f"Skill name very short: '{sn}'") if len(sn) < 5 else []


@check("SE-D009")
def se_dir_name_convention(ctx: Ctx) -> list[Hit]:
    sn = ctx.doc.dir_name
    ok = re.match(r"^[a-z][a-z0-9_-]*$", sn)
    return [] if ok else _hit(f"Skill name not following convention: '{sn}'")


# ---------------------------------------------------------------- reliability


@check("SE-R001")
def se_no_error_handling(ctx: Ctx) -> list[Hit]:
    if _ERROR_HANDLING.search(_view(ctx).content):
        return []
    return _hit("No mention of error handling or validation")


_SCRIPT_ERR = ("if not ", "if error", "raise", "assert", "ValueError", "FileNotFoundError")
_LIB_ERR = ("raise", "assert", "ValueError", "TypeError", "RuntimeError")


def _handles(text: str, markers: tuple[str, ...]) -> bool:
    return ("try:" in text and "except" in text) or any(m in text for m in markers)


@check("SE-R002")
def se_script_error_handling(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if not _scripted(v):
        return []
    bare = []
    for f in ctx.doc.files:
        if posixpath.dirname(f.rel) != "scripts" or not f.rel.endswith(".py") or not f.copied:
            continue
        if f.text is None:
            ctx.not_evaluable["SE-R002"] = f"{f.rel}: body unreadable ({f.problem}); not checked"
            continue
        if not _handles(f.text, _SCRIPT_ERR):
            bare.append(posixpath.basename(f.rel))
    if bare:
        return [Hit("scripts", None, f"Scripts may lack error handling: {', '.join(bare[:3])}")]
    return []


@check("SE-R003")
def se_lib_error_handling(ctx: Ctx) -> list[Hit]:
    v = _view(ctx)
    if v.skill_type != "lib-based" or v.lib_dir is None:
        return []
    bare = [
        posixpath.basename(f.rel)
        for f in ctx.doc.files
        if f.rel.startswith(v.lib_dir + "/")
        and f.rel.endswith(".py")
        and not f.rel.endswith("/__init__.py")
        and f.text is not None
        and not _handles(f.text, _LIB_ERR)
    ]
    if bare:
        return [Hit(v.lib_dir, None, f"Lib modules may lack error handling: {', '.join(bare[:3])}")]
    return []


@check("SE-R004")
def se_no_prerequisites(ctx: Ctx) -> list[Hit]:
    c = _view(ctx).content
    if "## Prerequisites" in c or "## Requirements" in c:
        return []
    return _hit("No prerequisites/requirements documented")


@check("SE-R005")
def se_no_limitations(ctx: Ctx) -> list[Hit]:
    return [] if "## Limitations" in _view(ctx).content else _hit("No limitations documented")


@check("SE-R006")
def se_no_troubleshooting(ctx: Ctx) -> list[Hit]:
    c = _view(ctx).content
    if any(s in c for s in ("## Troubleshooting", "## Common Issues", "## FAQ")):
        return []
    return _hit("No troubleshooting section documented")


# ---------------------------------------------------------------- efficiency


@check("SE-E001")
def se_large_skill(ctx: Ctx) -> list[Hit]:
    tokens = len(_view(ctx).content) // 4
    if tokens > MAX_TOKENS:
        return _hit(f"Large skill ({tokens} tokens, recommended max <{MAX_TOKENS})")
    return []


@check("SE-E002")
def se_line_repetition(ctx: Ctx) -> list[Hit]:
    non_empty = [ln for ln in _view(ctx).content.split("\n") if ln.strip()]
    distinct = {ln.strip() for ln in non_empty}
    if distinct and len(distinct) < len(non_empty) * 0.7:
        return _hit("High line repetition detected")
    return []


def _instructions(content: str) -> str:
    for heading in ("## Instructions", "## Usage"):
        if heading in content:
            parts = content.split(f"\n{heading}\n", 1)
            return parts[1].split("\n## ", 1)[0] if len(parts) > 1 else ""
    return ""


@check("SE-E003")
def se_instructions_no_verbs(ctx: Ctx) -> list[Hit]:
    section = _instructions(_view(ctx).content)
    return _hit("Instructions lack clear action verbs") if section and not _ACTION.search(section) else []


@check("SE-E004")
def se_instructions_not_list(ctx: Ctx) -> list[Hit]:
    s = _instructions(_view(ctx).content)
    return _hit("Instructions not in list format") if s and not ("- " in s or "1." in s or "* " in s) else []


@check("SE-E005")
def se_corporate_language(ctx: Ctx) -> list[Hit]:
    return _hit("Uses complex/corporate language") if _CORPORATE.search(_view(ctx).content) else []


def _reference_mds(ctx: Ctx) -> list[Any]:
    return sorted(
        (
            f
            for f in ctx.doc.files
            if f.copied and posixpath.dirname(f.rel) == "references" and f.rel.endswith(".md")
        ),
        key=lambda f: f.rel,
    )


@check("SE-E006")
def se_reference_filename(ctx: Ctx) -> list[Hit]:
    for f in _reference_mds(ctx):
        name = posixpath.basename(f.rel)
        stem = name[: -len(".md")].lower()
        if stem.isdigit() or stem in _VAGUE_STEMS or len(stem) < 4:
            return [Hit(f.rel, None, f"Non-descriptive filename: {name}")]
    return []


@check("SE-E007")
def se_nested_references(ctx: Ctx) -> list[Hit]:
    for f in _reference_mds(ctx):
        for target in _links(f.text or ""):
            p = _local_path(target)
            if p is not None and p.casefold().endswith(".md") and p.casefold() != "../skill.md":
                return [Hit(f.rel, None, f"Deeply nested references in {posixpath.basename(f.rel)}")]
    return []


@check("SE-E008")
def se_non_doc_reference(ctx: Ctx) -> list[Hit]:
    for rel in sorted(_view(ctx).on_disk):
        if posixpath.dirname(rel) == "references" and posixpath.splitext(rel)[1] in _NON_DOC:
            return [Hit(rel, None, f"Non-doc file in references/: {posixpath.basename(rel)}")]
    return []

