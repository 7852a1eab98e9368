"""markdown-it-py's CommonMark block parser, with its rules tried only where they can match.

markdown-it tries every block rule on every line, and every "terminator" rule on every
paragraph and list line, in Python; on a 167-skill corpus that is ~400k rule calls, most
of which fail on their first character test. Here the same library rule functions
(``markdown_it.rules_block``) run in the same order, but a line is only offered to the
rules whose first test its first character can pass. Each rule's own first test is a
necessary condition for it to match, so the tokens are identical to the stock
configuration (``stock_parser``); tests/static/test_static_mdparse.py checks that on
the shared corpus and on generated edge cases.

Everything is configured through the public ``Ruler`` API of a private ``MarkdownIt``
instance: other users of markdown-it-py in the process are unaffected.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_block import (
    StateBlock,
    blockquote,
    fence,
    heading,
    hr,
    lheading,
    list_block,
    paragraph,
)

Rule = Callable[[StateBlock, int, int, bool], bool]

# Inline parsing and the rules no outline reader needs are off in both parsers; the
# fast parser must produce what this configuration produces.
_OPTIONS = {"maxNesting": 40}
_DISABLED = ["inline", "text_join", "reference", "html_block"]

# Block rules the dispatch below replaces ("code" stays: StateBlock asks whether it is
# enabled to decide what an indented line is, and it is first in the chain anyway).
_DISPATCHED = ["fence", "blockquote", "hr", "list", "heading", "lheading", "paragraph"]

_DIGITS = "0123456789"
# After the first marker of a thematic break only spaces, tabs and the same marker
# may follow, so the next non-blank character must be that marker (hr needs 3).
_HR_NEXT = re.compile(r"[ \t]*(.)")
# A setext underline is a line of "=" or "-" (after indentation and, inside block
# quotes, ">" markers), and lheading looks for one only up to the next blank line. The
# first raw line that is blank or underline-shaped tells whether lheading can match.
_BLANK_OR_UNDERLINE = re.compile(
    r"^(?:(?P<blank>[ \t]*)|[ \t>]*(?:-+|=+)[ \t]*)$", re.MULTILINE
)


def _candidates(first: str, chain: str) -> tuple[Rule, ...]:
    """The rules of ``chain`` (in markdown-it's order) whose first test a line starting
    with ``first`` can pass. ``chain`` is "" (the main chain), "paragraph" (also used by
    blockquote: same members with reference and html_block off) or "list"."""
    out: list[Rule] = []
    if first in "`~":
        out.append(fence)
    if first == ">":
        out.append(blockquote)
    if first in "*-_":
        out.append(hr)
    if chain != "list" and (first in "*-+" or first in _DIGITS):
        out.append(list_block)
    if chain != "list" and first == "#":
        out.append(heading)
    if chain == "":
        out += [lheading, paragraph]  # both can start on any line
    return tuple(out)


def _table(chain: str) -> dict[str, tuple[Rule, ...]]:
    return {
        c: rules
        for c in "`~>*-_+#" + _DIGITS
        if (rules := _candidates(c, chain))
    }


_MAIN = _table("")
_MAIN_DEFAULT = (lheading, paragraph)
_ENDS_PARAGRAPH = _table("paragraph")
_ENDS_LIST = _table("list")


def _first_char(state: StateBlock, line: int) -> str:
    pos = state.bMarks[line] + state.tShift[line]
    return state.src[pos] if pos < len(state.src) else "\n"


def _hr_possible(state: StateBlock, line: int, marker: str) -> bool:
    pos = state.bMarks[line] + state.tShift[line] + 1
    m = _HR_NEXT.match(state.src, pos, state.eMarks[line])
    return m is not None and m.group(1) == marker


def _setext_possible(state: StateBlock, line: int) -> bool:
    m = _BLANK_OR_UNDERLINE.search(state.src, state.eMarks[line] + 1)
    return m is not None and m.group("blank") is None


def _run(
    rules: tuple[Rule, ...],
    first: str,
    state: StateBlock,
    line: int,
    end: int,
    silent: bool,
) -> bool:
    for rule in rules:
        if rule is hr and not _hr_possible(state, line, first):
            continue
        if rule is lheading and not _setext_possible(state, line):
            continue
        if rule(state, line, end, silent):
            return True
    return False


def _main_rule(state: StateBlock, line: int, end: int, silent: bool) -> bool:
    # Reached only when "code" (first in the chain) declined the line.
    first = _first_char(state, line)
    return _run(_MAIN.get(first, _MAIN_DEFAULT), first, state, line, end, silent)


def _terminator(table: dict[str, tuple[Rule, ...]]) -> Rule:
    def ends_block(state: StateBlock, line: int, end: int, silent: bool) -> bool:
        first = _first_char(state, line)
        rules = table.get(first)
        # Every terminator rule declines an indented-code line first thing.
        if rules is None or state.is_code_block(line):
            return False
        return _run(rules, first, state, line, end, silent)

    return ends_block


def stock_parser() -> MarkdownIt:
    """markdown-it-py's CommonMark parser, block rules only: the reference output."""
    return MarkdownIt("commonmark", _OPTIONS).disable(_DISABLED)


def block_parser() -> MarkdownIt:
    """A parser whose ``parse`` returns the same tokens as ``stock_parser``'s, faster."""
    md = stock_parser()
    ruler = md.block.ruler
    ruler.disable(_DISPATCHED)
    # The main chain is every enabled rule; _main_rule always matches (paragraph
    # does), so the two terminator entries after it are only reached through their
    # alt chains, which paragraph, lheading, blockquote and list consult.
    ruler.push("outline_blocks", _main_rule)
    ruler.push(
        "outline_ends_paragraph",
        _terminator(_ENDS_PARAGRAPH),
        {"alt": ["paragraph", "blockquote"]},
    )
    ruler.push("outline_ends_list", _terminator(_ENDS_LIST), {"alt": ["list"]})
    return md
