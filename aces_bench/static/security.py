"""Content security scan over SKILL.md, references and script bodies.

Patterns live in ``patterns.yaml``. Each regex runs only on files whose lowercased
text contains one of the pattern's literal needles, so a corpus scan costs one
``lower()`` and a few substring searches per file for the common, clean case.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aces_bench.errors import ConfigError, from_validation
from aces_bench.static.catalog import Severity
from aces_bench.static.loader import SkillDoc
from aces_bench.static.models import SecurityFinding

PATTERNS_FILE = Path(__file__).with_name("patterns.yaml")
MAX_PER_PATTERN_AND_FILE = 10
_FLAGS = {"dotall": re.DOTALL, "multiline": re.MULTILINE}


class Pattern(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^S\d{3}$")
    category: str
    severity: Severity
    title: str
    fix: str
    kind: Literal["regex", "unicode", "file"] = "regex"
    needles: list[str] = Field(default_factory=list)
    regex: str | None = None
    flags: list[Literal["dotall", "multiline"]] = Field(default_factory=list)
    case_sensitive: bool = False
    ignore: str | None = None
    unless: str | None = None
    context_after: int = 0
    allow_emoji_joiner: bool = Field(
        default=False,
        description="a lone U+200D after a symbol joins emoji; not a finding",
    )
    scope: Literal["line", "text"] = Field(
        default="line", description="line: every match holds a needle on its first line"
    )
    ranges: list[tuple[int, int]] = Field(default_factory=list)


class PatternSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str
    patterns: list[Pattern]


class _Compiled:
    """A pattern with its regexes compiled once."""

    def __init__(self, p: Pattern):
        self.p = p
        flags = 0 if p.case_sensitive else re.IGNORECASE
        for f in p.flags:
            flags |= _FLAGS[f]
        self.regex = re.compile(p.regex, flags) if p.regex else None
        self.ignore = re.compile(p.ignore) if p.ignore else None
        self.needles = tuple(n.lower() for n in p.needles)
        if p.kind == "unicode":
            cls = "".join(
                f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in p.ranges
            )
            self.regex = re.compile(f"[{cls}]+")


def load_patterns(path: Path) -> PatternSet:
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        ps = PatternSet.model_validate(raw)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"cannot read security patterns: {exc}",
            where=path,
            fix="restore patterns.yaml from the package",
        ) from None
    except ValidationError as exc:
        raise from_validation(
            exc, where=path, fix="correct the listed keys in the pattern file"
        ) from None
    for p in ps.patterns:
        if p.kind == "regex" and not p.regex:
            raise ConfigError(
                f"pattern {p.id} has no regex",
                where=path,
                fix="add 'regex:' or set 'kind: unicode|file'",
            )
        try:
            _Compiled(p)
        except re.error as exc:
            raise ConfigError(
                f"pattern {p.id} does not compile: {exc}",
                where=f"{path}:{p.id}",
                fix="fix the regular expression",
            ) from None
    return ps


@cache
def patterns() -> dict[str, _Compiled]:
    return {p.id: _Compiled(p) for p in load_patterns(PATTERNS_FILE).patterns}


@cache
def _any_unicode() -> re.Pattern[str]:
    """One character class over every unicode pattern: a single pass rules most files out."""
    ranges = [
        r for c in patterns().values() if c.p.kind == "unicode" for r in c.p.ranges
    ]
    return re.compile(
        "["
        + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)
        + "]"
    )


@cache
def _needle_finder() -> Callable[[str], dict[str, list[int]]]:
    """A function giving, for a lowercased text, each present needle's start offsets.

    Uses one Aho-Corasick pass (ahocorasick-rs) when installed, about ten times faster
    on a corpus than one substring search per needle, which is the fallback; both give
    the same offsets.
    """
    needles = sorted({n for c in patterns().values() for n in c.needles})
    try:
        import ahocorasick_rs
    except ImportError:
        return lambda lower: {n: hits for n in needles if (hits := _find_all(lower, n))}
    automaton = ahocorasick_rs.AhoCorasick(needles)

    def find(lower: str) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for i, start, _ in automaton.find_matches_as_indexes(lower, overlapping=True):
            out.setdefault(needles[i], []).append(start)
        return out

    return find


def _find_all(text: str, needle: str) -> list[int]:
    out, i = [], text.find(needle)
    while i != -1:
        out.append(i)
        i = text.find(needle, i + 1)
    return out


def _windows(text: str, starts: list[int]) -> list[tuple[int, int]]:
    """The distinct lines holding the given offsets, as (start, end) spans."""
    spans = set()
    for p in starts:
        a = text.rfind("\n", 0, p) + 1
        b = text.find("\n", p)
        spans.add((a, len(text) if b == -1 else b))
    return sorted(spans)


class _Lines:
    """Offsets -> (line, column), built on first use only."""

    def __init__(self, text: str):
        self.text = text
        self._starts: list[int] | None = None

    def at(self, pos: int) -> tuple[int, int]:
        if self._starts is None:
            self._starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        i = bisect.bisect_right(self._starts, pos) - 1
        return i + 1, pos - self._starts[i] + 1


def _excerpt(c: _Compiled, text: str, m: re.Match[str]) -> str:
    s = m.group(0)
    if c.p.category == "secret":
        return f"{s[:6]}... ({len(s)} chars, masked)"
    s = " ".join(s.split())
    return s if len(s) <= 120 else s[:117] + "..."


def _decode_tags(run: str) -> str | None:
    chars = [chr(ord(ch) - 0xE0000) for ch in run if 0xE0020 <= ord(ch) <= 0xE007E]
    return "".join(chars) or None


def _matches(
    c: _Compiled, text: str, present: dict[str, list[int]], aligned: bool
) -> Iterator[re.Match[str]]:
    """Regex matches, searched only on the lines holding a needle when the pattern is line-scoped."""
    assert c.regex is not None
    if c.p.kind == "unicode" or not c.needles or not aligned or c.p.scope == "text":
        yield from c.regex.finditer(text)
        return
    starts = [p for n in c.needles for p in present.get(n, ())]
    for a, b in _windows(text, starts):
        yield from c.regex.finditer(text, a, b)


def scan_text(rel: str, text: str) -> list[SecurityFinding]:
    """Every security finding in one file's text (at most 10 per pattern)."""
    out: list[SecurityFinding] = []
    lower = text.lower()
    present = _needle_finder()(lower)
    # Offsets in the lowercased text match the original unless lower() changed the
    # length (a few non-ASCII letters); then patterns run over the whole text.
    aligned = len(lower) == len(text)
    lines = _Lines(text)
    spans: dict[str, list[tuple[int, int]]] = {}
    suspicious_unicode = not text.isascii() and _any_unicode().search(text) is not None
    for pid, c in patterns().items():
        p = c.p
        if p.kind == "file" or c.regex is None:
            continue
        if p.kind == "unicode":
            if not suspicious_unicode:
                continue
        elif c.needles and present.keys().isdisjoint(c.needles):
            continue
        found = 0
        for m in _matches(c, text, present, aligned):
            if p.kind == "unicode" and m.start() == 0 and m.group(0) == "\ufeff":
                continue  # a byte-order mark at the start of a file is harmless
            if (
                p.allow_emoji_joiner
                and m.group(0) == "\u200d"
                and m.start() > 0
                and unicodedata.category(text[m.start() - 1]).startswith("S")
            ):
                continue
            if c.ignore:
                window = text[m.start() : m.end() + p.context_after]
                if c.ignore.search(window):
                    continue
            if p.unless and any(a <= m.start() < b for a, b in spans.get(p.unless, [])):
                continue
            spans.setdefault(pid, []).append((m.start(), m.end()))
            line, col = lines.at(m.start())
            decoded = (
                _decode_tags(m.group(0))
                if p.kind == "unicode" and p.id == "S050"
                else None
            )
            if p.kind == "unicode":
                cps = sorted({f"U+{ord(ch):04X}" for ch in m.group(0)})
                message = (
                    f"{p.title}: {len(m.group(0))} character(s) {', '.join(cps[:4])}"
                )
                if decoded:
                    message += f"; hidden text: {decoded!r}"
                excerpt = ""
            else:
                message, excerpt = p.title, _excerpt(c, text, m)
            out.append(
                SecurityFinding(
                    pattern_id=pid,
                    category=p.category,
                    severity=p.severity,
                    file=rel,
                    line=line,
                    column=col,
                    message=message,
                    excerpt=excerpt,
                    decoded=decoded,
                    fix=p.fix,
                )
            )
            found += 1
            if found >= MAX_PER_PATTERN_AND_FILE:
                break
    return out


def scan_doc(doc: SkillDoc) -> tuple[list[SecurityFinding], str | None]:
    """Findings over every readable text file of a skill, plus a note on what could not be scanned."""
    out: list[SecurityFinding] = []
    for f in doc.files:
        if f.text is not None:
            out.extend(scan_text(f.rel, f.text))
    pats = patterns()
    for prob in doc.problems:
        p = pats[prob.pattern_id].p
        out.append(
            SecurityFinding(
                pattern_id=p.id,
                category=p.category,
                severity=p.severity,
                file=prob.rel,
                message=prob.message,
                fix=p.fix,
            )
        )
    uncopied = [
        f.rel for f in doc.files if not f.copied and f.kind in ("script", "reference")
    ]
    note = None
    if uncopied:
        note = f"{len(uncopied)} file(s) listed in MANIFEST.json were not copied and not scanned: {', '.join(uncopied[:3])}{' ...' if len(uncopied) > 3 else ''}"
    return out, note
