#!/usr/bin/env python3
"""Next semantic version from conventional commits since the last release tag.

Usage: python3 scripts/next_version.py COMMITS.log

COMMITS.log is ``git log --oneline --decorate`` output, newest first:

    3f9a1c2 (HEAD -> main) fix(api): handle empty cart
    9d8e7f6 (tag: v2.3.1) chore(release): 2.3.1

Commits above the newest ``tag: vX.Y.Z`` are unreleased. Bump rules (Conventional
Commits 1.0 + SemVer 2.0): ``type!:`` or ``BREAKING CHANGE`` -> major, ``feat`` ->
minor, ``fix``/``perf`` -> patch, anything else -> no release. Below 1.0.0 a breaking
change bumps the minor version (SemVer item 4: 0.y.z may change at any time).

Standard library only; runs on Python 3.8+.
"""

import re
import sys
from pathlib import Path

EXIT_USAGE = 2
_LINE = re.compile(r"^(?P<sha>[0-9a-f]{7,40})(?:\s+\((?P<refs>[^)]*)\))?\s+(?P<subject>.*)$")
_TAG = re.compile(r"tag:\s*v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.-]+)?(?=,|$)")
_CONVENTIONAL = re.compile(r"^(?P<type>[a-zA-Z]+)(?:\([^)]*\))?(?P<bang>!)?:\s*\S")
PATCH_TYPES = ("fix", "perf")
RANK = {"none": 0, "patch": 1, "minor": 2, "major": 3}


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def parse_log(path):
    """Return [(sha, refs, subject)] newest first, refusing lines that are not git log lines."""
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found" % path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("%s: not a UTF-8 text file (expected git log output)" % path) from None
    commits = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _LINE.match(line.strip())
        if not m:
            raise InputError(
                "%s line %d: not a 'git log --oneline --decorate' line: %r" % (path, line_no, line[:80])
            )
        commits.append((m.group("sha"), m.group("refs") or "", m.group("subject")))
    if not commits:
        raise InputError("%s: no commits found (empty file)" % path)
    return commits


def classify(subject):
    """Return (bump, type) for one commit subject."""
    m = _CONVENTIONAL.match(subject)
    if "BREAKING CHANGE" in subject or "BREAKING-CHANGE" in subject or (m and m.group("bang")):
        return "major", m.group("type").lower() if m else "breaking"
    if not m:
        return "none", "non-conventional"
    kind = m.group("type").lower()
    if kind == "feat":
        return "minor", kind
    if kind in PATCH_TYPES:
        return "patch", kind
    return "none", kind


def next_version(current, bump):
    major, minor, patch = current
    if bump == "major" and major == 0:
        bump = "minor"
    if bump == "major":
        return (major + 1, 0, 0)
    if bump == "minor":
        return (major, minor + 1, 0)
    if bump == "patch":
        return (major, minor, patch + 1)
    return current


def analyse(commits):
    """Split off unreleased commits and decide the bump."""
    unreleased, last = [], None
    for sha, refs, subject in commits:
        tag = _TAG.search(refs)
        if tag:
            last = (sha, tuple(int(x) for x in tag.groups()))
            break
        unreleased.append((sha, subject))
    if last is None:
        raise InputError(
            "no release tag (tag: vX.Y.Z) in the log; run 'git log --oneline --decorate' "
            "so tags are shown, or tag the last release"
        )
    bump, counts, breaking = "none", {}, []
    for sha, subject in unreleased:
        level, kind = classify(subject)
        counts[kind] = counts.get(kind, 0) + 1
        if level == "major":
            breaking.append((sha, subject))
        if RANK[level] > RANK[bump]:
            bump = level
    return last, unreleased, bump, counts, breaking


def report(last, unreleased, bump, counts, breaking):
    sha, current = last
    cur = "%d.%d.%d" % current
    new = "%d.%d.%d" % next_version(current, bump)
    summary = ", ".join("%s: %d" % (k, counts[k]) for k in sorted(counts)) or "none"
    out = [
        "Last release: v%s (tag on %s)" % (cur, sha),
        "Unreleased commits: %d (%s)" % (len(unreleased), summary),
        "Breaking changes: %d" % len(breaking),
    ]
    out += ["  %s %s" % b for b in breaking]
    if bump == "major" and current[0] == 0:
        out.append("Bump: minor (breaking change before 1.0.0)")
    else:
        out.append("Bump: %s" % bump)
    if bump == "none":
        out.append("Next version: none (no feat, fix, perf or breaking commits since v%s)" % cur)
    else:
        out.append("Next version: %s" % new)
    return "\n".join(out)


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("usage: next_version.py COMMITS.log   (git log --oneline --decorate output)", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = analyse(parse_log(argv[1]))
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    print(report(*result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
