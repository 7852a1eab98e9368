"""Content security scan over SKILL.md, references and script bodies.

Patterns live in ``patterns.yaml``. Each regex runs only on files whose lowercased
text contains one of the pattern's literal needles, so a corpus scan costs one
``lower()`` and a few substring searches per file for the common, clean case.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

from aces_bench.inputs.security_patterns import PatternFile, SecurityPattern, read_pattern_file
from aces_bench.static import env_harvest
from aces_bench.static.loader import SkillDoc, file_kind
from aces_bench.static.models import SecurityFinding

PATTERNS_FILE = Path(__file__).with_name("patterns.yaml")
MAX_PER_PATTERN_AND_FILE = 10
MAX_WINDOWS = 200  # needle lines above which a pattern searches the whole text once
SCOPES = ("skill_file",)


class _Compiled:
    """A pattern with its regexes compiled once."""

    def __init__(self, p: SecurityPattern):
        self.p = p
        self.regex = re.compile(p.regex, p.regex_flags()) if p.regex else None
        self.ignore = re.compile(p.ignore_values, re.IGNORECASE) if p.ignore_values else None
        self.needles = tuple(p.prefilter)
        if p.kind == "unicode":
            cls = "".join(
                f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in p.ranges
            )
            self.regex = re.compile(f"[{cls}]+")
            # Its characters are its needles: none is cased and no letter lowercases to
            # one, so each is in the lowercased text exactly when it is in the text.
            self.needles = tuple(chr(c) for a, b in p.ranges for c in range(a, b + 1))


def load_patterns(path: Path) -> PatternFile:
    """Read and validate a static pattern file (the shared schema, scope ``skill_file``)."""
    return read_pattern_file(
        path, scopes=SCOPES, fix="correct the listed keys in the pattern file"
    )


@cache
def patterns() -> dict[str, _Compiled]:
    return {p.id: _Compiled(p) for p in load_patterns(PATTERNS_FILE).patterns}


@cache
def _needle_finder() -> Callable[[str], dict[str, list[int]]]:
    """A function giving, for a lowercased text, each present needle's start offsets.

    Uses one Aho-Corasick pass (ahocorasick-rs) when installed, about ten times faster
    on a corpus than one substring search per needle, which is the fallback; both give
    the same offsets. The automata are DFAs: slower to build (once per process) than
    the default NFA, three times faster to search.
    """
    needles = sorted({n for c in patterns().values() for n in c.needles})
    try:
        import ahocorasick_rs
    except ImportError:
        ascii_needles = [n for n in needles if n.isascii()]
        return lambda lower: {
            n: hits
            for n in (ascii_needles if lower.isascii() else needles)
            if (hits := _find_all(lower, n))
        }
    dfa = ahocorasick_rs.Implementation.DFA
    automaton = ahocorasick_rs.AhoCorasick(needles, implementation=dfa)
    # On ASCII text byte offsets are character offsets, and the bytes automaton skips
    # the str version's index conversion.
    ascii_automaton = ahocorasick_rs.BytesAhoCorasick(
        [n.encode() for n in needles], implementation=dfa
    )

    def find(lower: str) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        if lower.isascii():
            hits = ascii_automaton.find_matches_as_indexes(lower.encode("ascii"), overlapping=True)
        else:
            hits = automaton.find_matches_as_indexes(lower, overlapping=True)
        for i, start, _ in hits:
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
    """Offsets -> (line, column), counted in C for each finding (a file has few)."""

    def __init__(self, text: str):
        self.text = text

    def at(self, pos: int) -> tuple[int, int]:
        return self.text.count("\n", 0, pos) + 1, pos - self.text.rfind("\n", 0, pos)


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
    if c.p.kind == "unicode" or not c.needles or not aligned or c.p.search == "text":
        yield from c.regex.finditer(text)
        return
    starts = [p for n in c.needles for p in present.get(n, ())]
    if len(starts) > MAX_WINDOWS:
        # A frequent needle: one pass over the whole text is cheaper than one per line.
        for m in c.regex.finditer(text):
            if _on_needle_line(text, m.start(), c.needles):
                yield m
        return
    for a, b in _windows(text, starts):
        yield from c.regex.finditer(text, a, b)


def _on_needle_line(text: str, pos: int, needles: tuple[str, ...]) -> bool:
    """Whether the line holding ``pos`` contains one of the needles (lowercased)."""
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return any(n in text[a : len(text) if b == -1 else b].lower() for n in needles)


def scan_text(rel: str, text: str) -> list[SecurityFinding]:
    """Every security finding in one file's text (at most 10 per pattern)."""
    out: list[SecurityFinding] = []
    signals: set[str] = set()
    lower = text.lower()
    present = _needle_finder()(lower)
    # Offsets in the lowercased text match the original unless lower() changed the
    # length (a few non-ASCII letters); then patterns run over the whole text.
    aligned = len(lower) == len(text)
    lines = _Lines(text)
    spans: dict[str, list[tuple[int, int]]] = {}
    script = file_kind(rel) == "script"
    for pid, c in patterns().items():
        p = c.p
        if p.kind == "file" or c.regex is None:
            continue
        if not p.report and not script:
            continue  # signals feed the builtins, which judge scripts only
        if c.needles and present.keys().isdisjoint(c.needles):
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
                value = _value(c, m)
                window = (
                    value
                    if value is not None
                    else text[m.start() : m.end() + p.context_after]
                )
                if c.ignore.search(window):
                    continue
            if p.value_check == "secret_like" and not secret_like(
                _value(c, m) or "", m.groupdict().get("key")
            ):
                continue
            if not p.report:
                signals.add(pid)
                break
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
                    f"{p.description}: {len(m.group(0))} character(s) {', '.join(cps[:4])}"
                )
                if decoded:
                    message += f"; hidden text: {decoded!r}"
                excerpt = ""
            else:
                message, excerpt = p.description, _excerpt(c, text, m)
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
    if script:
        out.extend(_builtins(rel, out, signals))
    out.extend(_env_harvest(rel, text))
    return out


def _env_harvest(rel: str, text: str) -> Iterator[SecurityFinding]:
    """``env_harvest`` findings: environment values followed to a network request (``env_harvest.py``)."""
    pat = next((c.p for c in patterns().values() if c.p.builtin == "env_harvest"), None)
    if pat is None:
        return
    for f in env_harvest.flows(rel, text)[:MAX_PER_PATTERN_AND_FILE]:
        severity, why = env_harvest.flow_severity(f, text, pat.severity)
        yield SecurityFinding(pattern_id=pat.id, category=pat.category, severity=severity, file=rel, line=f.line,
                              message=f"{pat.description}: {f.what} sent by {f.sink}" + (f" ({why})" if why else ""),
                              excerpt=f.excerpt, fix=pat.fix)


def _value(c: _Compiled, m: re.Match[str]) -> str | None:
    """The first value group that matched, or None (then the whole match is judged)."""
    for g in c.p.value_groups:
        if m.group(g) is not None:
            return m.group(g)
    return None


def _builtins(
    rel: str, found: list[SecurityFinding], signals: set[str]
) -> Iterator[SecurityFinding]:
    """Findings decided from other findings of one script (``kind: builtin``)."""
    reads = {
        (f.pattern_id, f.excerpt) for f in found if f.category == "credential-access"
    }
    if not reads:
        return
    network = any(patterns()[s].p.category == "network" for s in signals)
    if not network and len(reads) < 2:
        return
    for c in patterns().values():
        p = c.p
        if p.kind != "builtin" or p.builtin != "credential_harvest":
            continue
        first = min(
            (f for f in found if f.category == "credential-access"),
            key=lambda f: (f.line or 0, f.column or 0),
        )
        what = ", ".join(sorted({pid for pid, _ in reads}))
        why = "a network send" if network else "more than one credential source"
        yield SecurityFinding(
            pattern_id=p.id,
            category=p.category,
            severity=p.severity,
            file=rel,
            line=first.line,
            column=first.column,
            message=f"{p.description}: {len(reads)} credential read(s) ({what}) with {why}",
            excerpt=first.excerpt,
            fix=p.fix,
        )


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in Counter(s).values())


# Keys that name where a secret is, or something about it, rather than holding it.
_NOT_SECRET_KEY = re.compile(
    r"(?:^|[_.-])(?:file|path|env|var|name|url|uri|endpoint|header|field|type|length|len|"
    r"count|limit|id|ids|prefix|dir|hint|policy|format|expires?|expiry|ttl|label|mode|"
    r"source|location|ref|arn|budget|usage|estimate)$|tokeni[sz]|tokens$|^max|^num|^n_",
    re.IGNORECASE,
)
_NOT_SECRET_VALUE = re.compile(
    r"[\d.:_/-]+|[a-z]+(?:[-_.][a-z]+)*|[A-Z]+(?:_[A-Z0-9]+)*|[A-Za-z_][\w.]*\(.*|"
    r"[A-Za-z_$][\w$]{0,23}(?:\.[A-Za-z_$][\w$]{0,23})+|(?:[a-z0-9_.-]+/)+[a-z0-9_.-]+|"
    r"(?i:true|false|null|none|nil|required|optional|string|bearer)"
)


def secret_like(value: str, key: str | None = None) -> bool:
    """Whether an assigned value looks like a real secret, not a name or a reference.

    Real secrets are at least 8 characters, mix three kinds of character (lower, upper,
    digit, symbol) with entropy of at least 3 bits per character, or are 20+ characters
    at 3.5 bits; identifiers, versions, paths, env-var names and calls are not secrets.
    """
    v = value.strip()
    if len(v) < 8 or (key is not None and _NOT_SECRET_KEY.search(key.strip("\"'"))):
        return False
    if v[0] in "$%<{[(/~." or "${" in v or "{{" in v or "://" in v:
        return False
    if _NOT_SECRET_VALUE.fullmatch(v):
        return False
    classes = (
        any(ch.islower() for ch in v)
        + any(ch.isupper() for ch in v)
        + any(ch.isdigit() for ch in v)
        + any(not ch.isalnum() for ch in v)
    )
    h = _entropy(v)
    return (classes >= 3 and h >= 3.0) or (len(v) >= 20 and classes >= 2 and h >= 3.5)


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
