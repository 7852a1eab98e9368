"""Fixtures a draft generates itself, so their right answer is known without running the skill.

A draft's expected values must never come from the target skill's own output (that
would certify its bugs), so the inputs it stages are written here from a fixed table
whose row count and column total this module computes. Each generator returns the
file's text and the facts any correct answer about it states.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

# A small, fixed sales table: eight rows, one of them a refund, totals not round.
_ROWS: tuple[tuple[str, str, int, str], ...] = (
    ("2024-03-01", "north", 3, "19.50"),
    ("2024-03-02", "south", 1, "7.25"),
    ("2024-03-03", "east", 4, "31.00"),
    ("2024-03-04", "west", 2, "12.40"),
    ("2024-03-05", "north", 5, "44.75"),
    ("2024-03-06", "south", 2, "-7.25"),
    ("2024-03-07", "east", 6, "52.20"),
    ("2024-03-08", "west", 1, "9.95"),
)
_COLUMNS = ("date", "region", "units", "amount")
AMOUNT_COLUMN = "amount"
GENERATED_SUFFIXES = (".csv", ".tsv", ".json", ".jsonl", ".txt", ".md", ".bib")


@dataclass(frozen=True)
class Fixture:
    """A generated input: its file name, its text and the facts a correct answer about it holds."""

    name: str
    text: str
    rows: int
    total: Decimal | None  # the amount column's sum, for tabular fixtures
    what: str  # how a user would name it ("sales table", "notes file")
    unit: str = "rows"  # what ``rows`` counts, as a user would ask for it ("rows", "entries")


def _records() -> list[dict]:
    return [dict(zip(_COLUMNS, (d, r, u, float(a)), strict=True)) for d, r, u, a in _ROWS]


def _total() -> Decimal:
    return sum((Decimal(a) for *_, a in _ROWS), Decimal(0))


def generate(suffix: str, stem: str = "sales") -> Fixture | None:
    """A fixture of that file type with a known answer, or None for a type this module cannot write."""
    suffix = suffix.lower()
    if suffix in (".csv", ".tsv"):
        sep = "," if suffix == ".csv" else "\t"
        lines = [sep.join(_COLUMNS)] + [sep.join((d, r, str(u), a)) for d, r, u, a in _ROWS]
        return Fixture(f"{stem}{suffix}", "\n".join(lines) + "\n", len(_ROWS), _total(), "sales table")
    if suffix == ".json":
        return Fixture(f"{stem}.json", json.dumps(_records(), indent=2) + "\n", len(_ROWS), _total(), "sales records file")
    if suffix == ".jsonl":
        text = "".join(json.dumps(r) + "\n" for r in _records())
        return Fixture(f"{stem}.jsonl", text, len(_ROWS), _total(), "sales records file")
    if suffix in (".txt", ".md"):
        head = "# Weekly notes\n\n" if suffix == ".md" else ""
        lines = [f"{d}: {r} region sold {u} units for {a}" for d, r, u, a in _ROWS]
        return Fixture(f"notes{suffix}", head + "\n".join(lines) + "\n", len(_ROWS), None, "notes file")
    if suffix == ".bib":
        return Fixture("references.bib", _bibtex(), len(_ROWS), None, "bibliography file", unit="entries")
    return None


def _bibtex() -> str:
    """One well-formed @article per table row; DOIs under 10.5555, the prefix reserved for examples."""
    out = []
    for i, (d, r, u, _a) in enumerate(_ROWS, 1):
        out.append(f"@article{{{r}{d[:4]}{chr(96 + i)},\n  author = {{{r.title()}, Ann and Lee, Bo}},\n"
                   f"  title = {{Regional sales note {i}: {u} units}},\n  journal = {{Journal of Examples}},\n"
                   f"  year = {{{d[:4]}}},\n  volume = {{{i}}},\n  pages = {{{10 * i}--{10 * i + 9}}},\n"
                   f"  doi = {{10.5555/draft.{i}}}\n}}\n")
    return "\n".join(out)
