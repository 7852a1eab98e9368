"""The fast block parser must give exactly the tokens of markdown-it-py's own."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from aces_bench.static.loader import split_frontmatter
from aces_bench.static.mdparse import block_parser, stock_parser

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "public-skills"

# Line starts that exercise every block rule and the places they interact: thematic
# breaks vs bullets, setext underlines, lazy continuations, ordered lists that may or
# may not interrupt a paragraph, fences with and without closers, nesting, tabs.
_PREFIXES = [
    "", "", "", " ", "  ", "   ", "    ", "     ", "\t", " \t",
    "> ", ">", "> > ", "- ", "* ", "+ ", "1. ", "2) ", "10. ", "- > ", "> - ", "  - ",
]
_BODIES = [
    "text", "more words here", "Use this when", "-", "--", "---", "***", "* * *",
    "___", "_ _ _", "- - -", "-- -", "*-*", "===", "=", "# Title", "## Sub ##",
    "####### seven", "#nospace", "#", "```", "```python", "``` a`b", "~~~", "~~~ info",
    "````", "- item", "* item", "+ item", "1. one", "1) one", "3. three", "0. zero",
    "1234567890. big", "-item", "> quote", ">", "    code", "\tcode", "`span` text",
    "[a](b.md)", "<div>", "| a | b |", "[ref]: /url", "", "",
]


def _tokens(md: MarkdownIt, text: str) -> list[dict]:
    return [t.as_dict() for t in md.parse(text)]


def _generated(n_docs: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        lines = []
        for _ in range(rng.randint(1, 14)):
            line = rng.choice(_PREFIXES) + rng.choice(_BODIES)
            if rng.random() < 0.2:
                line = rng.choice(_PREFIXES) + line
            lines.append(line)
        docs.append("\n".join(lines) + rng.choice(["", "\n", "\n\n", "   "]))
    return docs


def test_static_mdparse_generated_edge_cases_match_stock() -> None:
    fast, stock = block_parser(), stock_parser()
    seen_types: set[str] = set()
    for i, doc in enumerate(_generated(3000, seed=6)):
        expected = _tokens(stock, doc)
        assert _tokens(fast, doc) == expected, f"document {i} differs:\n{doc!r}"
        seen_types.update(t["type"] for t in expected)
    # The generator must reach every construct the dispatch decides about.
    assert {
        "hr", "heading_open", "fence", "code_block", "blockquote_open",
        "bullet_list_open", "ordered_list_open", "paragraph_open",
    } <= seen_types
    assert any(t.get("markup") in ("=", "-") for t in _tokens(stock, "a\n===\nb\n---"))


@pytest.mark.parametrize(
    "doc",
    [
        "",
        "\n\n\n",
        "a\n---",  # setext h2, not a thematic break
        "a\n- - -",  # thematic break ends the paragraph
        "- a\n- - -\n- b",  # a break between items, not an item
        "* a\n *  *  *",
        "para\n2. not a list",  # only "1." may interrupt a paragraph
        "para\n1. a list",
        "> a\n> ```\n> code\nlazy",
        "- a\n\n      indented code in item\n- b",
        "a\r\nb\r\n---\r\n",
        "x\0y\n# h",
    ],
)
def test_static_mdparse_known_edge_cases_match_stock(doc: str) -> None:
    assert _tokens(block_parser(), doc) == _tokens(stock_parser(), doc)


def test_static_mdparse_corpus_matches_stock() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus absent ({CORPUS})")
    fast, stock = block_parser(), stock_parser()
    paths = sorted(CORPUS.glob("*/*/SKILL.md"))
    assert len(paths) > 100
    for p in paths:
        body = split_frontmatter(p.read_text(encoding="utf-8"))[3]
        assert _tokens(fast, body) == _tokens(stock, body), p


def test_static_mdparse_leaves_other_parsers_alone() -> None:
    block_parser()
    md = MarkdownIt("commonmark")
    active = md.block.ruler.get_active_rules()
    assert "outline_blocks" not in active
    assert {"fence", "list", "paragraph", "lheading"} <= set(active)
    assert [t.type for t in md.parse("# h\n\n- a\n")][:4] == [
        "heading_open", "inline", "heading_close", "bullet_list_open",
    ]


def test_static_mdparse_corpus_scan_unchanged_by_fast_parser(monkeypatch) -> None:
    """Every finding and score on the corpus is the same with the stock parser."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus absent ({CORPUS})")
    from aces_bench.static import outline
    from aces_bench.static.pipeline import ScanOptions, run_scan

    def scan_json() -> list[str]:
        corpus, results = run_scan([CORPUS], ScanOptions(lint=False))
        return [corpus.model_dump_json()] + [r.model_dump_json() for r in results]

    fast = scan_json()
    stock = stock_parser()
    monkeypatch.setattr(outline, "_parser", lambda: stock)
    assert scan_json() == fast
