#!/usr/bin/env python3
"""Group the error entries of an application log by signature.

Usage: python3 scripts/triage.py APP.log [--top N] [--level LEVEL]

An entry is an error when its level is ERROR, FATAL or CRITICAL (or the chosen
``--level`` and above), or when it starts a Python traceback. Its signature is the
message with variable parts replaced: numbers -> <n>, hex ids -> <hex>, UUIDs ->
<uuid>, IPs -> <ip>, quoted strings -> <str>. Traceback frames are folded into the
entry and the final exception line is used as the message.

Standard library only; runs on Python 3.8+.
"""

import re
import sys
from pathlib import Path

EXIT_USAGE = 2
LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LEVEL_ALIASES = {"WARN": "WARNING", "FATAL": "CRITICAL", "ERR": "ERROR", "SEVERE": "CRITICAL"}
_ENTRY = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?Z?)\s+\[?(?P<level>[A-Z]+)\]?\s+(?P<msg>.*)$"
)
_SUBS = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE), "<uuid>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"), "<ip>"),
    (re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]{10,}\b", re.IGNORECASE), "<hex>"),
    (re.compile(r"'[^']*'|\"[^\"]*\""), "<str>"),
    (re.compile(r"\b\d+(?:\.\d+)?(?:ms|s|kb|mb)?\b", re.IGNORECASE), "<n>"),
]


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def signature(message):
    for pattern, repl in _SUBS:
        message = pattern.sub(repl, message)
    return " ".join(message.split())[:200]


def entries(lines):
    """Yield (line_no, timestamp, level, message) with traceback lines folded in."""
    current = None
    for no, line in enumerate(lines, start=1):
        m = _ENTRY.match(line)
        if m:
            if current:
                yield current
            level = LEVEL_ALIASES.get(m.group("level"), m.group("level"))
            current = [no, m.group("ts"), level, m.group("msg").strip()]
        elif current and line.strip() and not line.startswith((" ", "\t", "Traceback")):
            # The last unindented line of a traceback is "ExceptionType: message".
            current[3] = "%s | %s" % (current[3], line.strip()) if current[3] else line.strip()
            current[2] = current[2] if LEVELS.index(current[2]) >= LEVELS.index("ERROR") else "ERROR"
    if current:
        yield current


def triage(path, min_level):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found" % path)
    try:
        lines = p.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise InputError("%s: cannot read (%s)" % (path, exc.strerror)) from None
    groups, total, seen_entries = {}, 0, 0
    for no, ts, level, msg in entries(lines):
        seen_entries += 1
        if level not in LEVELS or LEVELS.index(level) < LEVELS.index(min_level):
            continue
        total += 1
        g = groups.setdefault(signature(msg), {"count": 0, "first": ts, "last": ts, "line": no, "example": msg})
        g["count"] += 1
        g["last"] = ts
    if seen_entries == 0:
        raise InputError(
            "%s: no timestamped log entries found; expected lines like "
            "'2024-05-01 12:00:00 ERROR message' or '2024-05-01T12:00:00Z [ERROR] message'" % path
        )
    return groups, total, seen_entries


def report(groups, total, seen, top, min_level):
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1]["count"], kv[1]["line"]))
    out = ["Entries: %d, at %s or above: %d, distinct signatures: %d" % (seen, min_level, total, len(groups))]
    for rank, (sig, g) in enumerate(ranked[:top], 1):
        out.append("%2d. x%-4d %s" % (rank, g["count"], sig))
        out.append("     first %s (line %d), last %s" % (g["first"], g["line"], g["last"]))
    if len(ranked) > top:
        out.append("(%d more signatures; use --top)" % (len(ranked) - top))
    return "\n".join(out)


def main(argv):
    args, top, level = argv[1:], 10, "ERROR"
    try:
        for flag in ("--top", "--level"):
            if flag in args:
                i = args.index(flag)
                value = args[i + 1]
                del args[i : i + 2]
                if flag == "--top":
                    top = int(value)
                    if top < 1:
                        raise ValueError("--top must be positive")
                else:
                    level = LEVEL_ALIASES.get(value.upper(), value.upper())
                    if level not in LEVELS:
                        raise ValueError("--level must be one of %s" % ", ".join(LEVELS))
    except (IndexError, ValueError) as exc:
        print("error: %s" % (exc if str(exc).startswith("--") else "--top needs a whole number"), file=sys.stderr)
        return EXIT_USAGE
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: triage.py APP.log [--top N] [--level LEVEL]", file=sys.stderr)
        return EXIT_USAGE
    try:
        groups, total, seen = triage(args[0], level)
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    print(report(groups, total, seen, top, level))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
