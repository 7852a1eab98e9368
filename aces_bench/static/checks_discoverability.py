"""Discoverability rules (D0xx): whether a router can pick the skill from its
description and name, and knows when not to."""

from __future__ import annotations

import re

from aces_bench.static.context import Ctx, Hit, at_skill_md, check

_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TRIGGER = re.compile(r"\b(?:use|used|using|when|whenever|for)\b", re.IGNORECASE)
_VAGUE = re.compile(
    r"\b(?:various|stuff|things|miscellaneous|misc|etc\b\.?|helps? with|general[- ]purpose|and more|anything|everything|all kinds of)",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    r"\b(?:do not use|don't use|never use|not for\b|not intended|not suitable|not designed|not meant|avoid using|"
    r"use [\w\s-]{1,40} instead|instead,? use|out of scope|does not (?:handle|support|cover)|doesn't (?:handle|support|cover)|"
    r"should not be used|when not to use|not use this|skip this skill|not appropriate)"
)
_FIRST_I = re.compile(r"\b(?:I|I'm|I'll|I've)\b")
_SECOND_ETC = re.compile(
    r"\b(?:me|my|we|we'll|we're|our|you|your|you'll|you're)\b", re.IGNORECASE
)
_WHEN_DESC = re.compile(
    r"\buse (?:this (?:skill )?|it )?(?:when|whenever|for|to|if|after|before|during)\b|\bwhen (?:the user|users?|you|asked|working|needing|creating|building)\b|\btrigger",
    re.IGNORECASE,
)
_WHEN_HEADING = re.compile(
    r"when to (?:use|apply|invoke|activate)|use cases?|\btriggers?\b|when (?:should|would)|applicab|\bscope\b|when to offer"
)
_WHEN_BODY = re.compile(
    r"\buse this skill (?:when|whenever|for|if|to)\b|\bthis skill (?:is|should be) used (?:when|for)\b|\bactivate (?:this skill )?when\b"
)
_GENERIC = frozenset(
    [
        "helper",
        "helpers",
        "utils",
        "util",
        "utilities",
        "utility",
        "tool",
        "tools",
        "misc",
        "general",
        "assistant",
        "skill",
        "my-skill",
        "test",
        "example",
        "default",
        "common",
        "stuff",
        "toolkit",
    ]
)
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "for",
        "to",
        "with",
        "in",
        "on",
        "skill",
        "skills",
        "tool",
        "tools",
        "this",
        "that",
    ]
)
_WORDS = re.compile(r"[a-z0-9]+")


def _desc_hit(ctx: Ctx, message: str) -> list[Hit]:
    return at_skill_md(ctx.fm_line("description"), message)


@check("D001")
def description_too_short(ctx: Ctx) -> list[Hit]:
    d = ctx.description
    return (
        _desc_hit(ctx, f"description is {len(d)} characters")
        if d and len(d) < 50
        else []
    )


@check("D002")
def description_long(ctx: Ctx) -> list[Hit]:
    d = ctx.description
    return (
        _desc_hit(ctx, f"description is {len(d)} characters")
        if d and 150 < len(d) <= 200
        else []
    )


@check("D003")
def description_too_long(ctx: Ctx) -> list[Hit]:
    d = ctx.description
    return (
        _desc_hit(ctx, f"description is {len(d)} characters")
        if d and len(d) > 200
        else []
    )


@check("D004")
def trigger_vocabulary_missing(ctx: Ctx) -> list[Hit]:
    d = ctx.description
    return (
        _desc_hit(ctx, "description contains none of 'use', 'when', 'for'")
        if d and not _TRIGGER.search(d)
        else []
    )


@check("D005")
def vague_wording(ctx: Ctx) -> list[Hit]:
    d = ctx.description
    if not d:
        return []
    words = sorted({m.group(0).lower() for m in _VAGUE.finditer(d)})
    return (
        _desc_hit(ctx, f"vague wording in the description: {', '.join(words)}")
        if words
        else []
    )


@check("D006")
def negative_boundary_missing(ctx: Ctx) -> list[Hit]:
    text = f"{(ctx.description or '').lower()}\n{ctx.prose_lower}"
    if _NEGATIVE.search(text):
        return []
    return _desc_hit(
        ctx, "neither the description nor the body says when not to use the skill"
    )


@check("D007")
def directory_naming(ctx: Ctx) -> list[Hit]:
    name = ctx.doc.dir_name
    return (
        at_skill_md(None, f"folder name {name!r} is not lowercase kebab-case")
        if not _KEBAB.match(name)
        else []
    )


@check("D008")
def person_tone(ctx: Ctx) -> list[Hit]:
    d = ctx.description
    if not d:
        return []
    found = sorted(
        {m.group(0) for m in _FIRST_I.finditer(d)}
        | {m.group(0).lower() for m in _SECOND_ETC.finditer(d)}
    )
    return (
        _desc_hit(ctx, f"description uses first/second person: {', '.join(found)}")
        if found
        else []
    )


@check("D009")
def when_to_use_missing(ctx: Ctx) -> list[Hit]:
    if ctx.description and _WHEN_DESC.search(ctx.description):
        return []
    if ctx.heading_matching(_WHEN_HEADING) is not None or _WHEN_BODY.search(
        ctx.prose_lower
    ):
        return []
    return _desc_hit(
        ctx, "no 'Use when ...' in the description and no 'When to use' section"
    )


@check("D010")
def generic_name(ctx: Ctx) -> list[Hit]:
    name = (ctx.name or ctx.doc.dir_name).lower()
    parts = set(re.split(r"[-_.\s]+", name)) - {""}
    if name in _GENERIC or (parts and parts <= _GENERIC):
        return at_skill_md(ctx.fm_line("name"), f"name {name!r} is generic")
    return []


@check("D011")
def title_heading_missing(ctx: Ctx) -> list[Hit]:
    if any(h.level == 1 for h in ctx.outline.headings):
        return []
    return at_skill_md(ctx.doc.body_line, "no '# Title' heading in the body")


@check("D012")
def description_restates_name(ctx: Ctx) -> list[Hit]:
    if not ctx.description or not ctx.name:
        return []
    name_words = set(_WORDS.findall(ctx.name.lower()))
    extra = set(_WORDS.findall(ctx.description.lower())) - name_words - _STOP
    return (
        _desc_hit(ctx, "the description adds nothing to the name") if not extra else []
    )
