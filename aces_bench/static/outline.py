"""The structure of a SKILL.md body, from markdown-it-py's block parser.

Only block rules run (inline parsing is disabled): headings, fences, lists and tables
are all the rules need, and block-only parsing keeps a 167-skill scan within budget.
Inline elements the rules use (links, code spans) are read from each block's text.
The parser (``mdparse.block_parser``) gives the same tokens as markdown-it-py's
CommonMark block parser with link reference definitions and raw HTML blocks read as
paragraphs and GFM tables not recognised (no rule needs them); it only skips rule
calls that cannot match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@cache
def _parser() -> MarkdownIt:
    """Built on the first outline: a profile whose rules read no outline (skillevaluator)
    never imports markdown-it."""
    from aces_bench.static.mdparse import block_parser

    return block_parser()

LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


@dataclass
class Heading:
    level: int
    text: str
    line: int


@dataclass
class Fence:
    info: str
    content: str
    line: int
    n_lines: int


@dataclass
class Outline:
    headings: list[Heading] = field(default_factory=list)
    fences: list[Fence] = field(default_factory=list)
    list_items: int = 0
    links: list[tuple[str, int]] = field(default_factory=list)  # (target, line)
    code_spans: list[tuple[str, int]] = field(default_factory=list)
    prose: str = ""  # block text outside code, joined by newlines

    def code_text(self) -> str:
        return (
            "\n".join(f.content for f in self.fences)
            + "\n"
            + "\n".join(s for s, _ in self.code_spans)
        )


def outline(body: str, first_line: int = 1) -> Outline:
    """Parse a markdown body; line numbers are 1-based in the file, offset by ``first_line``."""
    out = Outline()
    prose: list[str] = []
    tokens = _parser().parse(body)
    for i, tok in enumerate(tokens):
        t = tok.type
        if t == "inline":
            line = first_line + (tok.map[0] if tok.map else 0)
            content = tok.content
            prose.append(content)
            if "](" in content:
                out.links.extend((m.group(1), line) for m in LINK.finditer(content))
            if "`" in content:
                out.code_spans.extend(
                    (m.group(1), line) for m in _CODE_SPAN.finditer(content)
                )
        elif t == "heading_open":
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            line = first_line + (tok.map[0] if tok.map else 0)
            out.headings.append(
                Heading(int(tok.tag[1]), nxt.content.strip() if nxt else "", line)
            )
        elif t in ("fence", "code_block"):
            start = tok.map[0] if tok.map else 0
            out.fences.append(
                Fence(
                    tok.info.strip(),
                    tok.content,
                    first_line + start,
                    tok.content.count("\n"),
                )
            )
        elif t == "list_item_open":
            out.list_items += 1
    out.prose = "\n".join(prose)
    return out
