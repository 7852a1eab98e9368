"""Correctness rules (C0xx): the frontmatter contract and whether the skill's
references to its own files hold."""

from __future__ import annotations

import os
import posixpath
import re
from urllib.parse import unquote

from aces_bench.static.context import Ctx, Hit, at_skill_md, check
from aces_bench.static.loader import SKILL_FILE

_NAME_FORMAT = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_INSTRUCTIONS = re.compile(
    r"\b(?:instructions?|workflow|steps?|procedure|usage|how to(?: use)?|how it works|quick ?start|process|getting started)\b"
)
_SCRIPT_REF = re.compile(
    r"scripts/[\w./-]+\.(?:py|sh|bash|js|mjs|cjs|ts|rb|pl|ps1|r|go|lua|php)\b",
    re.IGNORECASE,
)
_PATH_CHAR = re.compile(r"[\w/-]")
INVISIBLE = re.compile(
    "[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|/|\{|\$)", re.IGNORECASE)


def _contract_hit(ctx: Ctx, field_name: str) -> list[Hit]:
    if ctx.declared(field_name):
        return []
    aliases = ", ".join(ctx.catalog.contract[field_name])
    return at_skill_md(
        1, f"frontmatter does not declare '{field_name}' (looked for: {aliases})"
    )


@check("C001")
def frontmatter_missing(ctx: Ctx) -> list[Hit]:
    return (
        at_skill_md(1, "SKILL.md does not start with a '---' YAML frontmatter block")
        if ctx.doc.fm_error == "missing"
        else []
    )


@check("C002")
def frontmatter_invalid(ctx: Ctx) -> list[Hit]:
    err = ctx.doc.fm_error
    return (
        at_skill_md(ctx.doc.fm_error_line, f"frontmatter {err}")
        if err and err.startswith("invalid")
        else []
    )


@check("C003")
def name_missing(ctx: Ctx) -> list[Hit]:
    # Only judged on a parsed frontmatter: a missing block is C001's (critical) finding.
    if ctx.doc.frontmatter is None or ctx.name:
        return []
    return at_skill_md(1, "frontmatter key 'name' is missing or empty")


@check("C004")
def description_missing(ctx: Ctx) -> list[Hit]:
    if ctx.doc.frontmatter is None or ctx.description:
        return []
    return at_skill_md(1, "frontmatter key 'description' is missing or empty")


@check("C005")
def version_missing(ctx: Ctx) -> list[Hit]:
    return _contract_hit(ctx, "version")


@check("C006")
def author_missing(ctx: Ctx) -> list[Hit]:
    return _contract_hit(ctx, "author")


@check("C007")
def tags_missing(ctx: Ctx) -> list[Hit]:
    return _contract_hit(ctx, "tags")


@check("C008")
def tools_missing(ctx: Ctx) -> list[Hit]:
    return _contract_hit(ctx, "tools")


@check("C009")
def name_directory_mismatch(ctx: Ctx) -> list[Hit]:
    if not ctx.name or ctx.name == ctx.doc.dir_name:
        return []
    return at_skill_md(
        ctx.fm_line("name"),
        f"name {ctx.name!r} differs from the folder name {ctx.doc.dir_name!r}",
    )


@check("C010")
def name_format(ctx: Ctx) -> list[Hit]:
    if not ctx.name or (len(ctx.name) <= 64 and _NAME_FORMAT.match(ctx.name)):
        return []
    return at_skill_md(
        ctx.fm_line("name"),
        f"name {ctx.name!r} is not lowercase kebab-case of at most 64 characters",
    )


@check("C011")
def instructions_section_missing(ctx: Ctx) -> list[Hit]:
    if ctx.heading_matching(_INSTRUCTIONS) is not None:
        return []
    return at_skill_md(
        ctx.doc.body_line,
        "no heading names the instructions (Instructions, Workflow, Steps, Usage, Quick start ...)",
    )


@check("C012")
def script_invocation_undocumented(ctx: Ctx) -> list[Hit]:
    if not ctx.scripts:
        return []
    code = ctx.outline.code_text()
    if any(os.path.basename(s.rel) in code for s in ctx.scripts):
        return []
    names = ", ".join(s.rel for s in ctx.scripts[:3]) + (
        " ..." if len(ctx.scripts) > 3 else ""
    )
    return at_skill_md(
        ctx.doc.body_line,
        f"{len(ctx.scripts)} script(s) ({names}) but no code block or code span shows how to run one",
    )


@check("C013")
def referenced_script_missing(ctx: Ctx) -> list[Hit]:
    text = ctx.doc.text or ""
    if "scripts/" not in text:
        return []
    hits, seen = [], set()
    pos = text.find("scripts/")
    while pos != -1:
        # Only paths rooted at the skill ('scripts/x.py', './scripts/x.py'), not 'a/scripts/x.py'.
        before = text[pos - 2 : pos] if pos >= 2 else text[:pos]
        rooted = pos == 0 or before == "./" or not _PATH_CHAR.match(text[pos - 1])
        m = _SCRIPT_REF.match(text, pos) if rooted else None
        if m and m.group(0) not in seen and m.group(0) not in ctx.rels:
            seen.add(m.group(0))
            hits.append(
                Hit(
                    SKILL_FILE,
                    text.count("\n", 0, pos) + 1,
                    f"references {m.group(0)}, which is not in the skill",
                )
            )
        pos = text.find("scripts/", pos + 8)
    return hits


@check("C014")
def script_not_documented(ctx: Ctx) -> list[Hit]:
    text = ctx.doc.text or ""
    return [
        Hit(s.rel, None, f"{s.rel} is not mentioned in SKILL.md")
        for s in ctx.scripts
        if os.path.basename(s.rel) not in text
    ]


@check("C015")
def injection_suspicious_characters(ctx: Ctx) -> list[Hit]:
    text = ctx.doc.text or ""
    if text.isascii():
        return []
    found = INVISIBLE.findall(text)
    if not found:
        return []
    first = INVISIBLE.search(text)
    line = text.count("\n", 0, first.start()) + 1 if first else None
    kinds = sorted({f"U+{ord(c):04X}" for c in found})
    return at_skill_md(
        line, f"{len(found)} invisible or bidi character(s): {', '.join(kinds[:6])}"
    )


@check("C016")
def referenced_file_missing(ctx: Ctx) -> list[Hit]:
    hits, seen = [], set()
    dirs = {posixpath.dirname(r) for r in ctx.rels}
    for target, line in ctx.outline.links:
        if _EXTERNAL.match(target):
            continue
        rel = posixpath.normpath(unquote(target.split("#", 1)[0].split("?", 1)[0]))
        if not rel or rel == "." or rel in seen:
            continue
        seen.add(rel)
        if rel in ctx.rels or rel in dirs or any(d.startswith(rel + "/") for d in dirs):
            continue
        if rel.startswith("..") and os.path.exists(os.path.join(ctx.doc.root, rel)):
            continue
        hits.append(
            Hit(SKILL_FILE, line, f"link target {target!r} does not exist in the skill")
        )
    return hits


@check("C017")
def body_too_short(ctx: Ctx) -> list[Hit]:
    words = ctx.body_words
    return (
        at_skill_md(ctx.doc.body_line, f"body has {words} words") if words < 50 else []
    )


@check("C018")
def frontmatter_field_type(ctx: Ctx) -> list[Hit]:
    hits = []
    for key in ("name", "description", "author"):
        if (
            key in ctx.fm
            and ctx.fm[key] is not None
            and not isinstance(ctx.fm[key], str)
        ):
            hits.append(
                Hit(
                    SKILL_FILE,
                    ctx.fm_line(key),
                    f"'{key}' is a {type(ctx.fm[key]).__name__}, expected a string",
                )
            )
    if "version" in ctx.fm and not isinstance(
        ctx.fm["version"], (str, int, float, type(None))
    ):
        hits.append(
            Hit(
                SKILL_FILE,
                ctx.fm_line("version"),
                f"'version' is a {type(ctx.fm['version']).__name__}, expected a string",
            )
        )
    for key in ("tags", "tools", "allowed-tools"):
        if (
            key in ctx.fm
            and ctx.fm[key] is not None
            and not isinstance(ctx.fm[key], (list, str))
        ):
            hits.append(
                Hit(
                    SKILL_FILE,
                    ctx.fm_line(key),
                    f"'{key}' is a {type(ctx.fm[key]).__name__}, expected a list or a string",
                )
            )
    return hits
