"""Efficiency rules (E0xx): how much context the skill costs an agent and how
much of it carries instructions."""

from __future__ import annotations

import posixpath
import re
from collections import Counter

from aces_bench.static.context import Ctx, Hit, approx_tokens, at_skill_md, check
from aces_bench.static.loader import SKILL_FILE
from aces_bench.static.outline import LINK

SKILL_MD_TOKEN_BUDGET = 5_000
SKILL_MD_LINE_BUDGET = 500
SKILL_TOKEN_BUDGET = 100_000
REFERENCE_TOKEN_BUDGET = 10_000
CODE_BLOCK_LINES = 60
_HEDGE = re.compile(
    r"\b(?:might|perhaps|maybe|possibly|try to|if possible|could potentially|you may want to|it may be)\b"
)
_MARKETING = re.compile(
    r"\b(?:powerful|seamless(?:ly)?|cutting[- ]edge|world[- ]class|revolutionary|best[- ]in[- ]class|state[- ]of[- ]the[- ]art|"
    r"effortless(?:ly)?|unparalleled|game[- ]chang\w+|next[- ]generation|blazing(?:ly)?[- ]fast|supercharge\w*|unleash\w*|"
    r"industry[- ]leading|unmatched|lightning[- ]fast|ultimate)\b"
)
_HAS_LETTERS = re.compile(r"[A-Za-z]{3}")
_TEXT_KINDS = ("skill_md", "script", "reference")


@check("E001")
def token_budget(ctx: Ctx) -> list[Hit]:
    tokens = approx_tokens(ctx.doc.text or "")
    return (
        at_skill_md(
            None,
            f"SKILL.md is about {tokens:,} tokens (budget {SKILL_MD_TOKEN_BUDGET:,})",
        )
        if tokens > SKILL_MD_TOKEN_BUDGET
        else []
    )


@check("E002")
def line_budget(ctx: Ctx) -> list[Hit]:
    lines = (ctx.doc.text or "").count("\n") + 1
    return (
        at_skill_md(None, f"SKILL.md has {lines} lines (budget {SKILL_MD_LINE_BUDGET})")
        if lines > SKILL_MD_LINE_BUDGET
        else []
    )


@check("E003")
def repeated_lines(ctx: Ctx) -> list[Hit]:
    counts = Counter(
        s
        for s in (raw.strip() for raw in ctx.outline.prose.splitlines())
        if len(s) >= 20 and _HAS_LETTERS.search(s)
    )
    repeated = [(line, n) for line, n in counts.items() if n >= 3]
    if not repeated:
        return []
    line, n = max(repeated, key=lambda x: x[1])
    shown = line if len(line) <= 60 else line[:57] + "..."
    return at_skill_md(
        None, f"{len(repeated)} line(s) repeated 3+ times, e.g. {shown!r} x{n}"
    )


@check("E004")
def list_format_missing(ctx: Ctx) -> list[Hit]:
    return (
        at_skill_md(
            ctx.doc.body_line, "no numbered or bulleted list anywhere in the body"
        )
        if ctx.outline.list_items == 0
        else []
    )


def _linked_from_skill_md(ctx: Ctx) -> set[str]:
    direct = {posixpath.normpath(t.split("#", 1)[0]) for t, _ in ctx.outline.links}
    direct |= {posixpath.normpath(s) for s, _ in ctx.outline.code_spans}
    text = ctx.doc.text or ""
    direct |= {r for r in ctx.rels if r in text}
    return direct


@check("E005")
def nested_reference_depth(ctx: Ctx) -> list[Hit]:
    refs = [r for r in ctx.references if r.text and "](" in r.text]
    if not refs:
        return []
    direct = _linked_from_skill_md(ctx)
    hits = []
    for ref in refs:
        if ref.rel not in direct:
            continue  # only first-hop references can create a second hop
        base = posixpath.dirname(ref.rel)
        for m in LINK.finditer(ref.text or ""):
            target = m.group(1).split("#", 1)[0]
            if not target or "://" in target:
                continue
            rel = posixpath.normpath(posixpath.join(base, target))
            if (
                rel != ref.rel
                and rel in ctx.rels
                and rel != SKILL_FILE
                and rel not in direct
                and rel.endswith((".md", ".txt"))
            ):
                line = (ref.text or "").count("\n", 0, m.start()) + 1
                hits.append(
                    Hit(
                        ref.rel,
                        line,
                        f"{ref.rel} links to {rel}, which SKILL.md does not link directly",
                    )
                )
                break
    return hits


@check("E006")
def hedge_language(ctx: Ctx) -> list[Hit]:
    n = len(_HEDGE.findall(ctx.prose_lower))
    words = max(ctx.body_words, 1)
    if n >= 5 and n * 1000 / words >= 4:
        return at_skill_md(
            None, f"{n} hedge words ({n * 1000 / words:.1f} per 1,000 words)"
        )
    return []


@check("E007")
def marketing_language(ctx: Ctx) -> list[Hit]:
    text = f"{(ctx.description or '').lower()}\n{ctx.prose_lower}"
    found = _MARKETING.findall(text)
    if len(found) < 2:
        return []
    return at_skill_md(
        None, f"{len(found)} marketing words: {', '.join(sorted(set(found))[:5])}"
    )


@check("E008")
def oversized_skill(ctx: Ctx) -> list[Hit]:
    total = sum(f.size for f in ctx.doc.files if f.kind in _TEXT_KINDS) // 4
    return (
        at_skill_md(
            None,
            f"skill text is about {total:,} tokens (budget {SKILL_TOKEN_BUDGET:,})",
        )
        if total > SKILL_TOKEN_BUDGET
        else []
    )


@check("E009")
def large_reference_file(ctx: Ctx) -> list[Hit]:
    return [
        Hit(
            r.rel,
            None,
            f"{r.rel} is about {r.size // 4:,} tokens (budget {REFERENCE_TOKEN_BUDGET:,})",
        )
        for r in ctx.references
        if r.size // 4 > REFERENCE_TOKEN_BUDGET
    ]


@check("E010")
def long_code_block(ctx: Ctx) -> list[Hit]:
    return [
        Hit(
            SKILL_FILE,
            f.line,
            f"code block of {f.n_lines} lines (limit {CODE_BLOCK_LINES})",
        )
        for f in ctx.outline.fences
        if f.n_lines > CODE_BLOCK_LINES
    ]
