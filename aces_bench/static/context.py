"""What the Tier 1 rules look at, computed once per skill, and the rule registry."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from aces_bench.static.catalog import Catalog
from aces_bench.static.loader import SKILL_FILE, FileEntry, SkillDoc
from aces_bench.static.outline import Outline, outline


@dataclass(frozen=True)
class Hit:
    file: str
    line: int | None
    message: str


@dataclass
class Ctx:
    doc: SkillDoc
    catalog: Catalog
    fm: dict[str, Any]
    name: str | None
    description: str | None
    scripts: list[FileEntry]
    references: list[FileEntry]
    rels: frozenset[str]
    not_evaluable: dict[str, str] = field(default_factory=dict)
    memo: dict[str, Any] = field(
        default_factory=dict
    )  # per-skill values a rule family computes once (e.g. the skillevaluator view)

    # The parsed body is computed on first use: a profile whose rules never read it
    # (skillevaluator) does not pay for Markdown parsing.
    @cached_property
    def outline(self) -> Outline:
        return outline(self.doc.body, self.doc.body_line)

    @cached_property
    def body_lower(self) -> str:
        return self.doc.body.lower()

    @cached_property
    def prose_lower(self) -> str:
        return self.outline.prose.lower()

    @cached_property
    def headings_lower(self) -> list[tuple[str, int]]:
        return [(h.text.lower(), h.line) for h in self.outline.headings]

    @cached_property
    def headings_joined(self) -> str:
        """One heading per line, so a rule searches all headings at once."""
        return "\n".join(" ".join(t.split()) for t, _ in self.headings_lower)

    @cached_property
    def body_words(self) -> int:
        return len(self.doc.body.split())

    def fm_line(self, key: str) -> int:
        """1-based line of a frontmatter key in SKILL.md, or 1 when absent."""
        if self.doc.text:
            m = re.search(
                rf"^{re.escape(key)}\s*:",
                self.doc.text[: self.doc.text.find("\n---", 3) + 1],
                re.MULTILINE,
            )
            if m:
                return self.doc.text.count("\n", 0, m.start()) + 1
        return 1

    def heading_matching(self, pattern: re.Pattern[str]) -> int | None:
        """Line of the first heading the pattern matches (patterns must not span lines)."""
        m = pattern.search(self.headings_joined)
        if m is None:
            return None
        return self.headings_lower[self.headings_joined.count("\n", 0, m.start())][1]

    def declared_top_level(self, field_name: str) -> bool:
        """Whether the contract field itself is a top-level frontmatter key (no aliases)."""
        return _non_empty(self.fm.get(field_name))

    def declared(self, field_name: str) -> bool:
        """Whether a contract field is declared under any of its catalog aliases."""
        return any(
            _non_empty(_lookup(self.fm, alias))
            for alias in self.catalog.contract.get(field_name, [field_name])
        )


def _lookup(data: dict[str, Any], dotted: str) -> Any:
    cur: Any = data
    for part in dotted.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _non_empty(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, (str, list, dict, tuple)):
        return bool(value.strip() if isinstance(value, str) else value)
    return True


def build_ctx(doc: SkillDoc, cat: Catalog) -> Ctx:
    """What the rules share for one skill; the parsed body follows on first use."""
    assert doc.text is not None, "build_ctx needs a readable SKILL.md"
    fm = doc.frontmatter or {}
    name = fm.get("name") if isinstance(fm.get("name"), str) else None
    desc = fm.get("description") if isinstance(fm.get("description"), str) else None
    return Ctx(
        doc=doc,
        catalog=cat,
        fm=fm,
        name=name.strip() if name else None,
        description=" ".join(desc.split()) if desc else None,
        scripts=[f for f in doc.files if f.kind == "script"],
        references=[f for f in doc.files if f.kind == "reference"],
        rels=frozenset(f.rel for f in doc.files),
    )


def approx_tokens(text: str) -> int:
    """Offline token estimate: ceil(chars / 4) (see models.TOKEN_METHOD)."""
    return math.ceil(len(text) / 4)


def words_tokens(text: str) -> int:
    """Cross-check estimate: words x 4/3."""
    return round(len(text.split()) * 4 / 3)


Check = Callable[[Ctx], list[Hit]]
CHECKS: dict[str, Check] = {}


def check(rule_id: str) -> Callable[[Check], Check]:
    """Register the function that evaluates catalog rule ``rule_id``."""

    def register(fn: Check) -> Check:
        if rule_id in CHECKS:
            raise RuntimeError(f"rule {rule_id} registered twice")
        CHECKS[rule_id] = fn
        return fn

    return register


def at_skill_md(line: int | None, message: str) -> list[Hit]:
    return [Hit(SKILL_FILE, line, message)]
