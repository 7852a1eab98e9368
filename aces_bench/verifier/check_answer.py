#!/usr/bin/env python3
"""In-sandbox verifier: applies a case's deterministic checks to the answer file.

Standalone on purpose (standard library only, Python >= 3.8): the emitter copies it
into each task's ``tests/`` folder and ``tests/test.sh`` runs it with whatever
``python3`` the environment has. It writes ``/logs/verifier/reward.json`` with a
single ``reward`` key (Harbor's pass@k needs exactly one key) and the per-check
detail to ``details.json``. A case with no checks gets no reward: ``reward.json`` is
``{}`` (Harbor accepts it and marks the reward invalid) and ``details.json`` says
``"unscored": "no verifier check: ..."``; the host reads such a trial as finished
with no reward.

Check semantics (mirrors ``aces_bench.cases.Check``; docs/answer-checks.md says them
with examples). Every check is *strict* unless it says ``"match": "lenient"``:

- the answer is bounded (``contains``, ``regex``): at most ``max_chars`` characters (default ``MAX_CHARS``), and
  not mostly a dump of the inputs (its words are mostly the inputs' words and it
  reproduces at least half of the inputs' distinct words; the inputs are the prompt
  and the fixtures, given to this script as digests in ``case.json``);
- no hedge (``number``, ``contains``, ``regex``): the answer must not offer other values
  as alternatives to the one checked ("40 or 42", "either ... or", "42 / 44", "maybe 42,
  possibly 44", a range "40-44" / "40 to 44" / "between 40 and 44" / "42 ± 2", a list
  ending in one "40, 42 or 44", or a line of bare numbers); amounts stated beside the
  result and not linked to it are other quantities and pass (``alternatives``). At most
  ``max_candidates`` alternatives are allowed (default ``MAX_ALTERNATIVES``, none);
- ``number``: with a ``label``, every number the answer attaches to that label must be
  the value, with no alternative; without one, a number must match, with no alternative
  and at most ``MAX_DISTINCT_NUMBERS`` numbers in all. For numbers a comma list holding
  the value offers its members of the value's size (within half of it) as alternatives. An answer past ``max_chars`` (or a dump) is judged on its final number alone;
- ``contains``: case-insensitive, whitespace-folded text; a value with a digit in it (an
  id, a version) must not come with more than ``MAX_TEXT_CANDIDATES`` other strings of
  its shape (``INV-1018`` among ``INV-1000`` ... ``INV-1099`` is a list of guesses);
- ``regex``: ``re.search`` with IGNORECASE | MULTILINE; the pattern must not match more
  than ``MAX_TEXT_CANDIDATES`` different strings;
- ``not_contains`` / ``equals``: as written (a flood cannot help either);
- ``written``: ``file`` names a file or a folder of the workspace; at least one regular
  file there (the file itself, or one under the folder, links never followed) whose
  name matches the glob ``value`` holds something and is well formed for its type
  (``well_formed``: JSON parses to a non-empty object or array, JSON lines parse, a CSV
  or TSV has a header and at least one row of the header's width, a PDF or PNG starts
  with its signature); an empty file, a link, a FIFO or a device is no file written.

Lenient checks keep the loose rules: any number within ``tolerance`` anywhere, text
anywhere, no bound on the answer.
"""

import csv
import fnmatch
import hashlib
import io
import json
import os
import re
import stat
import sys
from pathlib import Path

UNSCORED = "no verifier check: the case has no assertions; the outcome is left to the host's graders"

STRICT, LENIENT = "strict", "lenient"
MAX_CHARS = 4000
MAX_ALTERNATIVES = 0
MAX_DISTINCT_NUMBERS = 64
MAX_TEXT_CANDIDATES = 20
# A dump: at least this share of the answer's words are input words, and the answer
# reproduces at least this share of the inputs' distinct words.
DUMP_SHARE = 0.5
DUMP_MIN_WORDS = 20
DIGEST_CHARS = 8
# What the verifier reads of an answer file: past MAX_CHARS a strict check fails anyway.
READ_CAP = 1_000_000
# A ``written`` check on a folder reads at most this many files of it.
MAX_TREE_FILES = 200
# File types a ``written`` check knows the form of, by suffix (anything else: not blank).
_JSON_SUFFIXES = (".json", ".ipynb", ".geojson")
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_SIGNATURES = {".pdf": "%PDF-", ".png": "PNG\r\n\x1a\n"}

# A number stands on its own: not glued to a word, a dot or a hyphen on its left, so
# "INV-1018", "p95", "x264" and the ".1" of "2.3.1" are not numbers; a sign counts only
# where a word could start (" -35.00").
_NUMBER = re.compile(r"(?<![\w.\-])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"\w+")
_PLAIN_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
_LABEL_GAP = r"[^\S\n]*(?:\([^)\n]{0,40}\))?[^\S\n]*[:=|]?[^\S\n]*(?:(?:is|was|are|were|of|equals|approximately|about|around|roughly|probably|likely|maybe|perhaps|possibly)[^\S\n]+)*[~≈$€£]?[^\S\n]*"


def _opt(check, key, default):
    value = check.get(key)
    return default if value is None else value


def _fold(text):
    return " ".join(str(text).split()).casefold()


def numbers_in(text):
    """Every number written in ``text`` (thousands separators allowed), in order."""
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text)]


def words_in(text):
    return _WORD.findall(str(text).casefold())


def digest(item):
    """The short digest ``case.json`` carries for an input word."""
    return hashlib.sha256(item.encode("utf-8")).hexdigest()[:DIGEST_CHARS]


def input_digests(texts):
    """The sorted digests of the distinct words of ``texts`` (the prompt, the fixtures)."""
    return sorted({digest(w) for t in texts for w in words_in(t)})


def _close(n, target, tol):
    return abs(n - target) <= tol + 1e-9 * max(1.0, abs(target))


def _candidate_window(target, tol):
    """Numbers this close to the target are of its size: candidates for the same quantity."""
    return max(0.5 * abs(target), 2.0 * tol, 1.0 if target == 0 else 0.0)


# --- Alternatives: several values offered for one quantity ----------------------------------
#
# An answer hedges when it links values as alternatives for one quantity: "40 or 42", "42 / 44",
# "either 40 or 42", "maybe 42, possibly 44", a range ("40-44", "40 to 44", "between 40 and
# 44", "42 ± 2"), a list ending in one ("40, 42 or 44"), or a line of bare numbers with
# nothing naming them. Other amounts stated beside the result are not linked to it ("1,400.07
# (invoices 3,200.00 and 1,799.93)", "1746 ms, up from 1700 ms") and are never rivals.

_HEDGE_WORDS = r"maybe|perhaps|possibly|probably|likely|might|could|alternatively|otherwise|else"
_OR = re.compile(r"\b(?:or|either|nor)\b|±|\+/-", re.IGNORECASE)
_HEDGE = re.compile(r"\b(?:%s)\b" % _HEDGE_WORDS, re.IGNORECASE)
_RANGE = re.compile(r"^(?:-|–|—|−|~|\.\.\.?|…|to|through|thru|till|until)$", re.IGNORECASE)
_SLASH = re.compile(r"^(?:/|\?|\+-)$")
# A number glued to a dot, colon or slash and a digit is a part of an address, a time, a
# date or a fraction ("192.168.10.77", "00:01:01,250", "12/05/2024", "2/3", "1 1/2"), not
# a value of its own.
_COMPOUND_AFTER = re.compile(r"[.:/]\d")
_COMPOUND_BEFORE = re.compile(r"\d[.:/]$")
_CHANGE_FROM = re.compile(r"\b(?:rose|risen|rises|fell|falls|fallen|increased?|decreased?|grew|grown|dropped|drops|"
                          r"went|goes|moved|changed?|up|down|jumped|climbed|declined|improved|reduced|raised|"
                          r"lowered|cut|slowed|sped)\b[^.\n]{0,24}\bfrom\s*[$€£¥]?\s*$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s*[$€£¥]?\s*$", re.IGNORECASE)
# A hyphen or dots right after a number, then a number that is not part of a date or a
# version ("2024-05-01", "1.2.3"): the second end of a range the number regex leaves out.
_RANGE_END = re.compile(r"(?:-|\.\.\.?)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?![\w.]*[-/.:]\d)")
_CURRENCY_END = re.compile(r"\s*[$€£¥]$")
_UNIT_START = re.compile(r"^(?:[^\W\d_]{1,5}\.?|%)(?=\s|[^\w\s]|$)")
_UNIT_END = re.compile(r"(?:^|(?<=\s))[^\W\d_]{1,5}$")
_LIST_GAP = re.compile(r"^[,;]\s+$")
_SEPARATORS = re.compile(r"^[\s,;|]*$")
_LINK_GAP_CHARS = 48
_LINK_GAP_WORDS = 8
ALT, LIST = "alternative", "list"


def _tokens(text):
    """(start, end, value) of every number in ``text``, and the far end of each written range."""
    out = []
    for m in _NUMBER.finditer(text):
        if _COMPOUND_AFTER.match(text, m.end()) or _COMPOUND_BEFORE.search(text[max(0, m.start() - 2):m.start()]):
            continue
        out.append((m.start(), m.end(), float(m.group(0).replace(",", ""))))
        tail = _RANGE_END.match(text, m.end())
        if tail and float(tail.group(1).replace(",", "")) > out[-1][2]:
            out.append((tail.start(1), tail.end(1), float(tail.group(1).replace(",", ""))))
    return out


def _core(gap):
    """The gap between two values without whitespace, a currency before the second value
    and a unit on either side ("$40 to $44", "40 ms - 44 ms")."""
    core = _CURRENCY_END.sub("", gap.strip())
    if _RANGE.match(core) or core.lower() in ("and", "&"):
        return core
    return _UNIT_END.sub("", _UNIT_START.sub("", core).strip()).strip()


def _link(text, a, b, same_size):
    """How two neighbouring values ``a`` and ``b`` (spans) are linked: ALT, LIST or None."""
    gap = text[a[1]:b[0]]
    if len(gap) > _LINK_GAP_CHARS or len(gap.split()) > _LINK_GAP_WORDS:
        return None
    if _OR.search(gap):
        return ALT  # "or" links across a blank line too
    if "\n\n" in gap:
        return None
    core = _core(gap)
    if _SLASH.match(core) or (same_size and _HEDGE.search(gap)):
        return ALT
    if _RANGE.match(core):
        return None if core.lower() == "to" and _CHANGE_FROM.search(text[max(0, a[0] - 60):a[0]]) else ALT
    if core.lower() in ("and", "&") and _BETWEEN.search(text[max(0, a[0] - 20):a[0]]):
        return ALT
    if _LIST_GAP.match(gap):
        return LIST
    return None


def _bare_lines(text, spans):
    """Groups of indexes of the values on a line (or in a whole answer) that holds nothing
    but two or more different numbers and separators: nothing names any of them. Linear in
    the answer: a long answer of repeated numbers must not stall the verifier."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    by_line = {}
    n, at = 0, 0
    for i, (start, _, _) in enumerate(spans):
        n += text.count("\n", at, start)
        at = start
        by_line.setdefault(n, []).append(i)
    out = []
    for n, inside in [*by_line.items(), (None, list(range(len(spans))))]:
        if len({spans[i][2] for i in inside}) < 2:
            continue
        start, end = (0, len(text)) if n is None else (offsets[n], offsets[n] + len(lines[n]))
        rest, pos = [], start
        for i in inside:
            rest.append(text[pos:spans[i][0]])
            pos = spans[i][1]
        rest.append(text[pos:end])
        if _SEPARATORS.match("".join(rest)):
            out.append(inside)
    return out


def alternatives(text, spans, targets, is_value, same_size, lists=True):
    """The values ``text`` offers as alternatives to a target value, in order of first offer.

    ``spans``: (start, end, value) of the candidate values, in text order; ``targets``: the
    indexes of the spans read as the stated result; ``is_value(v)``: whether a value is the
    expected one (never its own rival); ``same_size(v)`` which are of the target's kind (a hedge word
    links those only; "or", a slash or a range link any value). Values joined by a chain of
    such links (and of commas) are alternatives to one another, and so are the numbers of a
    bare line. With ``lists``, a comma list holding the target and no other link offers its
    members of the target's kind.
    """
    parent = list(range(len(spans)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    hedges = []
    for i in range(len(spans) - 1):
        kind = _link(text, spans[i], spans[i + 1], same_size(spans[i][2]) and same_size(spans[i + 1][2]))
        if kind:
            parent[root(i + 1)] = root(i)
            if kind == ALT:
                hedges.append(i)
    for line in _bare_lines(text, spans):
        for i in line[1:]:
            parent[root(i)] = root(line[0])
        hedges.append(line[0])
    hedged = {root(i) for i in hedges}
    groups = {root(i) for i in targets}
    out = []
    for i, s in enumerate(spans):
        r = root(i)
        if r not in groups or is_value(s[2]) or s[2] in out:
            continue
        if r in hedged or (lists and same_size(s[2])):
            out.append(s[2])
    return out


def _labelled(text, label):
    """(start, end, value) of the number the answer attaches to each mention of ``label``."""
    pattern = re.compile(re.escape(_fold(label)).replace(r"\ ", r"\s+") + _LABEL_GAP, re.IGNORECASE)
    out = []
    for m in pattern.finditer(text):
        n = _NUMBER.match(text, m.end())
        if n is None and m.end() < len(text) and text[m.end()] in "-+":
            n = re.compile(r"[-+](?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?").match(text, m.end())
        if n is not None:
            out.append((n.start(), n.end(), float(n.group(0).replace(",", ""))))
    return out


def _shape(value):
    """A regex for strings shaped like ``value``: digit runs, letter runs and the rest kept."""
    parts = []
    for run in re.findall(r"\d+|[^\W\d_]+|.", value):
        if run.isdigit():
            parts.append(r"\d+")
        elif run.isalpha():
            parts.append(r"[^\W\d_]+")
        else:
            parts.append(re.escape(run))
    return re.compile(r"(?<![\w.])" + "".join(parts) + r"(?![\w])", re.IGNORECASE)


def _bounded(check, text, inputs):
    """(ok, why not) for the strict rules every check shares: the answer's size, and no dump."""
    limit = _opt(check, "max_chars", MAX_CHARS)
    if len(text) > limit:
        return False, ("the answer is %d characters, over the %d a strict check reads (a flood is not an "
                       "answer; set max_chars on the check if this answer is meant to be long)" % (len(text), limit))
    if inputs:
        words = words_in(text)
        known = set(inputs)
        if len(words) >= DUMP_MIN_WORDS and len(known) >= DUMP_MIN_WORDS:
            hashed = [digest(w) for w in words]
            share = sum(h in known for h in hashed) / len(hashed)
            coverage = len(known.intersection(hashed)) / len(known)
            if share >= DUMP_SHARE and coverage >= DUMP_SHARE:
                return False, ("the answer is a dump of the input: %.0f%% of its words are the input's and it "
                               "reproduces %.0f%% of the input's distinct words" % (100 * share, 100 * coverage))
    return True, ""


def _number(check, text, unbounded=None):
    target = float(check["value"])
    tol = float(check.get("tolerance") or 0.0)
    if check.get("match") == LENIENT:
        ok = any(_close(n, target, tol) for n in numbers_in(text))
        return ok, "found %g within %g" % (target, tol) if ok else "no number within %g of %g" % (tol, target)
    label = check.get("label")
    if unbounded and not label:
        # A long answer (or a dump) states one result at most: its final number. One number
        # is no list of candidates, so it is judged; nothing else in it is.
        found = numbers_in(text)
        if found and _close(found[-1], target, tol):
            return True, "the answer's final number is %g (within %g); the rest is not read: %s" % (
                target, tol, unbounded.split(" (")[0])
        return False, "%s; its final number %s is not %g within %g" % (
            unbounded, "%g" % found[-1] if found else "(none)", target, tol)
    allowed = _opt(check, "max_candidates", MAX_ALTERNATIVES)
    if label:
        stated = _labelled(text, label)
        if not stated:
            return False, "the answer states no number for %r" % label
        wrong = sorted({v for _, _, v in stated if not _close(v, target, tol)})
        if wrong:
            return False, ("the answer gives %r as %s, not %g within %g"
                           % (label, ", ".join("%g" % n for n in wrong), target, tol))
        why = hedged(text, target, tol, allowed, stated=stated)
        return (False, "%r: %s" % (label, why)) if why else (True, "%r is %g (within %g)" % (label, target, tol))
    if not any(_close(n, target, tol) for n in numbers_in(text)):
        return False, "no number within %g of %g" % (tol, target)
    why = hedged(text, target, tol, allowed)
    return (False, why) if why else (True, "found %g within %g" % (target, tol))


def hedged(text, target, tol, allowed=0, stated=None):
    """Why ``text`` does not state ``target`` as one result, or None: it holds more than
    ``MAX_DISTINCT_NUMBERS`` numbers, or offers more than ``allowed`` other values as
    alternatives to it (``alternatives``). ``stated``: the spans a label reads (default:
    every number within ``tol`` of the target)."""
    spans = _tokens(text)
    distinct = {v for _, _, v in spans}
    if len(distinct) > MAX_DISTINCT_NUMBERS:
        return ("the answer holds %d different numbers (more than %d): a list of candidates, not a "
                "stated result" % (len(distinct), MAX_DISTINCT_NUMBERS))
    starts = None if stated is None else {s for s, _, _ in stated}
    targets = [i for i, (s, e, v) in enumerate(spans)
               if (_close(v, target, tol) if starts is None else any(s <= t < e for t in starts))]
    window = _candidate_window(target, tol)
    rivals = alternatives(text, spans, targets, lambda v: _close(v, target, tol),
                          lambda v: abs(v - target) <= window)
    if len(rivals) <= allowed:
        return None
    shown = ", ".join("%g" % n for n in rivals[:6]) + (" ..." if len(rivals) > 6 else "")
    return ("the answer offers %s as alternative(s) to %g: a hedge, not one stated result"
            % (shown, target))


# After a word value, "or"/"vs" and a word offer another; these words after "or" do not
# ("3.11 or later", "high or higher"): they qualify the value instead of replacing it.
_WORD_AFTER = re.compile(r"\s*[,;]?\s*\(?\s*(?:\bor\b|\bnor\b|/)\s*(?:(?:%s)\s+)?([^\W\d_][\w-]*)"
                         % _HEDGE_WORDS, re.IGNORECASE)
_WORD_BEFORE = re.compile(r"(?:\b([^\W\d_][\w-]*)\s*,?\s*(?:\bor\b|\bnor\b|/)|\beither)\s*$",
                          re.IGNORECASE)
_QUALIFIERS = {"later", "earlier", "newer", "older", "higher", "lower", "above", "below", "more", "less", "fewer",
               "greater", "so", "not", "equivalent", "similar", "both", "none", "any", "else", "other", "others",
               "the", "a", "an", "its", "their", "whatever", "all"}


def _word_rival(text, start, end):
    """The word ``text`` offers beside the value at ``start:end`` as an alternative, or None."""
    after = _WORD_AFTER.match(text, end)
    if after and after.group(1).casefold() not in _QUALIFIERS:
        return after.group(1)
    before = _WORD_BEFORE.search(text[max(0, start - 40):start])
    if before and (before.group(1) is None or before.group(1).casefold() not in _QUALIFIERS):
        return before.group(1) or "either"
    return None


def _text_hedge(value, spans_of, text, allowed):
    """Why the text value at each of ``spans_of`` (start, end) is offered with alternatives, or None."""
    if re.search(r"\d", value):
        shape = [(m.start(), m.end(), m.group(0).casefold()) for m in _shape(value).finditer(text)]
        starts = {s for s, _ in spans_of}
        targets = [i for i, (s, e, _) in enumerate(shape) if any(s <= t < e for t in starts)]
        rivals = alternatives(text, shape, targets, lambda v: v == _fold(value), lambda v: True, lists=False)
    else:
        rivals = [w for w in (_word_rival(text, s, e) for s, e in spans_of) if w]
    if len(set(rivals)) <= allowed:
        return None
    return "the answer offers %s as alternative(s) to %r: a hedge, not one stated result" % (
        ", ".join(sorted(set(map(str, rivals)))[:6]), value)


def _contains(check, text):
    value = str(check["value"])
    ok = _fold(value) in _fold(text)
    if not ok:
        return False, "did not find %r" % value
    if check.get("match") == LENIENT:
        return True, "found %r" % value
    allowed = _opt(check, "max_candidates", MAX_ALTERNATIVES)
    if _PLAIN_NUMBER.match(value.strip()):
        # A plain number asked as text is still a number: the number rules say whether the
        # answer states it or offers alternatives to it.
        why = hedged(text, float(value.strip().replace(",", "")), 0.0, allowed)
        return (False, why) if why else (True, "found %r" % value)
    if re.search(r"\d", value):
        others = {m.group(0).casefold() for m in _shape(value.strip()).finditer(text)} - {_fold(value)}
        if len(others) > MAX_TEXT_CANDIDATES:
            return False, ("found %r among %d other strings of its shape: a list of candidates, not an answer"
                           % (value, len(others)))
    pattern = re.compile(r"\s+".join(re.escape(w) for w in value.split()), re.IGNORECASE)
    why = _text_hedge(value.strip(), [m.span() for m in pattern.finditer(text)], text, allowed)
    return (False, why) if why else (True, "found %r" % value)


def _regex(check, text):
    pattern = re.compile(str(check["value"]), re.IGNORECASE | re.MULTILINE)
    found = [m for m in pattern.finditer(text) if m.group(0)] or [m for m in [pattern.search(text)] if m]
    if not found:
        return False, "no match for %r" % check["value"]
    if check.get("match") == LENIENT:
        return True, "matched %r" % check["value"]
    matches = {m.group(0).casefold() for m in found}
    if len(matches) > MAX_TEXT_CANDIDATES + 1:
        return False, ("%r matches %d different strings: a list of candidates, not an answer"
                       % (check["value"], len(matches)))
    allowed = _opt(check, "max_candidates", MAX_ALTERNATIVES)
    for m in found:
        if not m.group(0).strip():
            continue
        why = _text_hedge(m.group(0).strip(), [m.span()], text, allowed)
        if why:
            return False, why
    return True, "matched %r" % check["value"]


def well_formed(name, text):
    """(True, "") when ``text`` is a well formed file of ``name``'s type, else (False, why).

    Every type: not blank. JSON: parses to a non-empty object or array. JSON lines: at
    least one line, every line parses. CSV/TSV: a header and at least one row, every row
    as wide as the header. PDF/PNG: the format's signature. Other types: not blank only.
    """
    if not text.strip():
        return False, "empty"
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _JSON_SUFFIXES:
        try:
            data = json.loads(text)
        except ValueError as exc:
            return False, "not JSON (%s)" % exc
        if not isinstance(data, (dict, list)) or not data:
            return False, "JSON holding no object or array with anything in it"
    elif suffix in _JSONL_SUFFIXES:
        for i, line in enumerate(text.splitlines(), 1):
            try:
                line.strip() and json.loads(line)
            except ValueError:
                return False, "line %d is not JSON" % i
    elif suffix in (".csv", ".tsv"):
        rows = [r for r in csv.reader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ",") if r]
        if len(rows) < 2:
            return False, "no row under the header"
        ragged = next((i for i, r in enumerate(rows[1:], 2) if len(r) != len(rows[0])), None)
        if ragged is not None:
            return False, "row %d is not as wide as the header (%d fields)" % (ragged, len(rows[0]))
    elif suffix in _SIGNATURES and _SIGNATURES[suffix] not in text[:8]:
        return False, "no %s signature" % suffix[1:].upper()
    return True, ""


def _written(check, files):
    """A ``written`` check on ``files`` ({path: text} of the regular files found under ``check["file"]``)."""
    pattern = str(check["value"]) or "*"
    named = sorted(p for p in files if fnmatch.fnmatch(p.rsplit("/", 1)[-1], pattern))
    if not named:
        return False, "no file matching %r written in %s" % (pattern, check.get("file"))
    why = []
    for path in named:
        ok, reason = well_formed(path, files[path])
        if ok:
            return True, "%s written and well formed" % path
        why.append("%s: %s" % (path, reason))
    return False, "no well formed file written: " + "; ".join(why[:5])


def evaluate_check(check, text, inputs=None):
    """Return (passed, detail) for one check dict against ``text`` (None = file missing).

    ``inputs``: digests of the input words (``input_digests``), for the dump rule; None
    skips that rule (the host's heuristic judge has no inputs). For a ``written`` check
    ``text`` is a dict {path: text} of the regular files found (a string: the one file).
    """
    kind = check["kind"]
    value = check["value"]
    if text is None:
        return False, "answer file missing" if kind != "written" else "nothing written at %s" % check.get("file")
    if kind == "written":
        return _written(check, text if isinstance(text, dict) else {check.get("file") or "answer": text})
    if kind == "not_contains":
        ok = _fold(value) not in _fold(text)
        return ok, ("absent: " if ok else "present: ") + repr(value)
    if kind == "equals":
        ok = _fold(value) == _fold(text)
        return ok, "equal" if ok else "answer differs from expected text"
    if kind not in ("contains", "regex", "number"):
        return False, "unknown check kind %r" % kind
    if _opt(check, "match", STRICT) not in (STRICT, LENIENT):
        return False, "unknown match %r (strict or lenient)" % check.get("match")
    unbounded = None
    if check.get("match") != LENIENT:
        ok, why = _bounded(check, text, inputs)
        if not ok and kind != "number":
            return False, why
        unbounded = None if ok else why
    if kind == "contains":
        return _contains(check, text)
    if kind == "regex":
        return _regex(check, text)
    return _number(check, text, unbounded)


def evaluate_checks(checks, read_file, inputs=None, read_tree=None):
    """Apply every check; ``read_file(name_or_None)`` returns text or None if absent;
    ``read_tree(name)`` the regular files at ``name`` (a file or a folder) as {path: text},
    or None (for ``written`` checks; without it, the one file ``read_file`` gives)."""
    results = []
    for check in checks:
        if check["kind"] == "written":
            if read_tree is not None:
                text = read_tree(check.get("file"))
            else:
                one = read_file(check.get("file"))
                text = None if one is None else {check.get("file"): one}
        else:
            text = read_file(check.get("file"))
        passed, detail = evaluate_check(check, text, inputs)
        results.append({"check": check, "passed": passed, "detail": detail})
    return results


def read_answer(workdir, name, cap=READ_CAP):
    """The text of ``workdir/name``, at most ``cap`` characters; None when it is absent or
    is not a regular file inside the workdir.

    A link (to ``/tests/case.json``, which holds the expected values, or anywhere else),
    a FIFO or a device planted where the answer should be is no answer: it is never
    followed or opened for reading in a way that could block.
    """
    root = os.path.realpath(str(workdir))
    path = os.path.join(root, name)
    real = os.path.realpath(path)
    if real != os.path.normpath(path) or os.path.commonpath([root, real]) != root:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(cap * 4)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")[:cap]


def read_tree(workdir, name, cap=READ_CAP, limit=MAX_TREE_FILES):
    """The regular files at ``workdir/name`` as {workspace path: text}: the file itself, or
    the files under the folder (at most ``limit``, in name order); None when nothing is there.

    A link (the folder itself, a folder under it or a file) is never followed, and a FIFO
    or a device is never opened for reading in a way that could block (``read_answer``).
    """
    root = os.path.realpath(str(workdir))
    path = os.path.normpath(os.path.join(root, name or "."))
    if os.path.realpath(path) != path or os.path.commonpath([root, path]) != root:
        return None
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    if stat.S_ISREG(mode):
        text = read_answer(root, rel, cap)
        return None if text is None else {rel: text}
    if not stat.S_ISDIR(mode):
        return None
    out = {}
    for top, dirs, names in os.walk(path):  # never into a linked folder (followlinks is off)
        dirs.sort()
        for n in sorted(names):
            if len(out) >= limit:
                return out
            sub = os.path.relpath(os.path.join(top, n), root).replace(os.sep, "/")
            text = read_answer(root, sub, cap)
            if text is not None:
                out[sub] = text
    return out


def main(argv):
    if len(argv) != 4:
        print("usage: check_answer.py CASE_JSON WORKDIR LOG_DIR", file=sys.stderr)
        return 2
    case = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    workdir, log_dir = Path(argv[2]), Path(argv[3])
    answer_file = case.get("answer_file", "answer.txt")

    def read_file(name):
        return read_answer(workdir, name or answer_file)

    results = evaluate_checks(case.get("checks", []), read_file, case.get("input_words"),
                              lambda name: read_tree(workdir, name))
    details = {"case_id": case.get("id"), "checks": results}
    if results:
        reward = 1.0 if all(r["passed"] for r in results) else 0.0
        details["reward"] = reward
        rewards = {"reward": reward}
    else:
        # No deterministic check, no reward: an empty reward dict is Harbor's "no reward"
        # (accepted, and reward_valid is False), so no artifact claims a pass it never checked.
        details["reward"] = None
        details["unscored"] = UNSCORED
        details["answer_file_present"] = read_file(None) is not None
        rewards = {}
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "details.json").write_text(json.dumps(details, indent=2), encoding="utf-8")
    (log_dir / "reward.json").write_text(json.dumps(rewards), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
