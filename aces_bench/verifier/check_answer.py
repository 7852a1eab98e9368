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

Check semantics (mirrors ``aces_bench.cases.Check``):
  contains / not_contains / equals  case-insensitive, whitespace-folded text
  regex                             ``re.search`` with IGNORECASE | MULTILINE
  number                            some number in the text within ``tolerance``
"""

import json
import re
import sys
from pathlib import Path

UNSCORED = "no verifier check: the case has no assertions; the outcome is left to the host's graders"

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _fold(text):
    return " ".join(str(text).split()).casefold()


def numbers_in(text):
    """Every number written in ``text`` (thousands separators allowed)."""
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text)]


def evaluate_check(check, text):
    """Return (passed, detail) for one check dict against ``text`` (None = file missing)."""
    kind = check["kind"]
    value = check["value"]
    if text is None:
        return False, "answer file missing"
    if kind == "contains":
        ok = _fold(value) in _fold(text)
        return ok, ("found " if ok else "did not find ") + repr(value)
    if kind == "not_contains":
        ok = _fold(value) not in _fold(text)
        return ok, ("absent: " if ok else "present: ") + repr(value)
    if kind == "equals":
        ok = _fold(value) == _fold(text)
        return ok, "equal" if ok else "answer differs from expected text"
    if kind == "regex":
        ok = re.search(str(value), text, re.IGNORECASE | re.MULTILINE) is not None
        return ok, ("matched " if ok else "no match for ") + repr(value)
    if kind == "number":
        target = float(value)
        tol = float(check.get("tolerance") or 0.0)
        found = numbers_in(text)
        ok = any(abs(n - target) <= tol + 1e-9 for n in found)
        return ok, "found %s within %s" % (target, tol) if ok else "no number within %s of %s" % (tol, target)
    return False, "unknown check kind %r" % kind


def evaluate_checks(checks, read_file):
    """Apply every check; ``read_file(name_or_None)`` returns text or None if absent."""
    results = []
    for check in checks:
        text = read_file(check.get("file"))
        passed, detail = evaluate_check(check, text)
        results.append({"check": check, "passed": passed, "detail": detail})
    return results


def main(argv):
    if len(argv) != 4:
        print("usage: check_answer.py CASE_JSON WORKDIR LOG_DIR", file=sys.stderr)
        return 2
    case = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    workdir, log_dir = Path(argv[2]), Path(argv[3])
    answer_file = case.get("answer_file", "answer.txt")

    def read_file(name):
        path = workdir / (name or answer_file)
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    results = evaluate_checks(case.get("checks", []), read_file)
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
