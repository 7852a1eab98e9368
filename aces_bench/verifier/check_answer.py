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
- ``number``: with a ``label``, every number the answer attaches to that label must be
  the value (one stated result); without one, a number must match and the answer must
  not offer several candidates: at most ``MAX_NUMBER_CANDIDATES`` other values of the
  same size (within half the value) and at most ``MAX_DISTINCT_NUMBERS`` numbers in all.
  An answer past ``max_chars`` (or a dump) is judged on its final number alone;
- ``contains``: case-insensitive, whitespace-folded text; a value with a digit in it (an
  id, a version) must not come with more than ``MAX_TEXT_CANDIDATES`` other strings of
  its shape (``INV-1018`` among ``INV-1000`` ... ``INV-1099`` is a list of guesses);
- ``regex``: ``re.search`` with IGNORECASE | MULTILINE; the pattern must not match more
  than ``MAX_TEXT_CANDIDATES`` different strings;
- ``not_contains`` / ``equals``: as written (a flood cannot help either).

Lenient checks keep the loose rules: any number within ``tolerance`` anywhere, text
anywhere, no bound on the answer.
"""

import hashlib
import json
import os
import re
import stat
import sys
from pathlib import Path

UNSCORED = "no verifier check: the case has no assertions; the outcome is left to the host's graders"

STRICT, LENIENT = "strict", "lenient"
MAX_CHARS = 4000
MAX_NUMBER_CANDIDATES = 3
MAX_DISTINCT_NUMBERS = 64
MAX_TEXT_CANDIDATES = 20
# A dump: at least this share of the answer's words are input words, and the answer
# reproduces at least this share of the inputs' distinct words.
DUMP_SHARE = 0.5
DUMP_MIN_WORDS = 20
DIGEST_CHARS = 8
# What the verifier reads of an answer file: past MAX_CHARS a strict check fails anyway.
READ_CAP = 1_000_000

# A number stands on its own: not glued to a word, a dot or a hyphen on its left, so
# "INV-1018", "p95", "x264" and the ".1" of "2.3.1" are not numbers; a sign counts only
# where a word could start (" -35.00").
_NUMBER = re.compile(r"(?<![\w.\-])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_WORD = re.compile(r"\w+")
_PLAIN_NUMBER = re.compile(r"^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
_LABEL_GAP = r"[^\S\n]*(?:\([^)\n]{0,40}\))?[^\S\n]*[:=]?[^\S\n]*(?:(?:is|was|are|were|of|equals|approximately|about)[^\S\n]+)*[~≈$€£]?[^\S\n]*"


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


def _labelled(text, label):
    pattern = re.compile(re.escape(_fold(label)).replace(r"\ ", r"\s+") + _LABEL_GAP, re.IGNORECASE)
    out = []
    for m in pattern.finditer(text):
        n = _NUMBER.match(text, m.end())
        if n is None and m.end() < len(text) and text[m.end()] in "-+":
            n = re.compile(r"[-+](?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?").match(text, m.end())
        if n is not None:
            out.append(float(n.group(0).replace(",", "")))
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
    if label:
        stated = _labelled(text, label)
        if not stated:
            return False, "the answer states no number for %r" % label
        wrong = sorted({n for n in stated if not _close(n, target, tol)})
        if wrong:
            return False, ("the answer gives %r as %s, not %g within %g"
                           % (label, ", ".join("%g" % n for n in wrong), target, tol))
        return True, "%r is %g (within %g)" % (label, target, tol)
    found = numbers_in(text)
    if not any(_close(n, target, tol) for n in found):
        return False, "no number within %g of %g" % (tol, target)
    crowd = crowded(found, target, tol, _opt(check, "max_candidates", MAX_NUMBER_CANDIDATES))
    if crowd:
        return False, crowd
    return True, "found %g within %g" % (target, tol)


def crowded(found, target, tol, max_candidates):
    """Why the numbers ``found`` are a list of candidates for ``target``, or None."""
    distinct = sorted(set(found))
    if len(distinct) > MAX_DISTINCT_NUMBERS:
        return ("the answer holds %d different numbers (more than %d): a list of candidates, not a "
                "stated result" % (len(distinct), MAX_DISTINCT_NUMBERS))
    window = _candidate_window(target, tol)
    rivals = [n for n in distinct if not _close(n, target, tol) and abs(n - target) <= window]
    if len(rivals) > max_candidates:
        shown = ", ".join("%g" % n for n in rivals[:6]) + (" ..." if len(rivals) > 6 else "")
        return ("the answer offers %d other values of the same size as %g (%s): several candidates "
                "for one quantity; name the quantity with a label to check one stated result"
                % (len(rivals), target, shown))
    return None


def _contains(check, text):
    value = str(check["value"])
    ok = _fold(value) in _fold(text)
    if not ok:
        return False, "did not find %r" % value
    if check.get("match") != LENIENT and _PLAIN_NUMBER.match(value.strip()):
        # A plain number asked as text is still a number: the number rules say whether the
        # answer states it or lists candidates around it.
        crowd = crowded(numbers_in(text), float(value.strip().replace(",", "")), 0.0,
                         _opt(check, "max_candidates", MAX_NUMBER_CANDIDATES))
        return (False, crowd) if crowd else (True, "found %r" % value)
    if check.get("match") != LENIENT and re.search(r"\d", value):
        others = {m.group(0).casefold() for m in _shape(value.strip()).finditer(text)} - {_fold(value)}
        if len(others) > _opt(check, "max_candidates", MAX_TEXT_CANDIDATES):
            return False, ("found %r among %d other strings of its shape: a list of candidates, not an answer"
                           % (value, len(others)))
    return True, "found %r" % value


def _regex(check, text):
    pattern = re.compile(str(check["value"]), re.IGNORECASE | re.MULTILINE)
    matches = {m.group(0).casefold() for m in pattern.finditer(text)}
    if not matches and pattern.search(text) is None:
        return False, "no match for %r" % check["value"]
    if check.get("match") != LENIENT and len(matches) > _opt(check, "max_candidates", MAX_TEXT_CANDIDATES) + 1:
        return False, ("%r matches %d different strings: a list of candidates, not an answer"
                       % (check["value"], len(matches)))
    return True, "matched %r" % check["value"]


def evaluate_check(check, text, inputs=None):
    """Return (passed, detail) for one check dict against ``text`` (None = file missing).

    ``inputs``: digests of the input words (``input_digests``), for the dump rule; None
    skips that rule (the host's heuristic judge has no inputs).
    """
    kind = check["kind"]
    value = check["value"]
    if text is None:
        return False, "answer file missing"
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


def evaluate_checks(checks, read_file, inputs=None):
    """Apply every check; ``read_file(name_or_None)`` returns text or None if absent."""
    results = []
    for check in checks:
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


def main(argv):
    if len(argv) != 4:
        print("usage: check_answer.py CASE_JSON WORKDIR LOG_DIR", file=sys.stderr)
        return 2
    case = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    workdir, log_dir = Path(argv[2]), Path(argv[3])
    answer_file = case.get("answer_file", "answer.txt")

    def read_file(name):
        return read_answer(workdir, name or answer_file)

    results = evaluate_checks(case.get("checks", []), read_file, case.get("input_words"))
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
