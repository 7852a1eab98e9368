#!/usr/bin/env python3
"""Test a regular expression against each line of a file and show matches and capture groups.

Usage: python3 scripts/regextest.py <lines.txt> [--pattern REGEX]

Standard library only.
"""

import argparse, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--pattern", default=r"(\d{4})-(\d{2})-(\d{2})")
a = ap.parse_args()
try:
    rx = re.compile(a.pattern)
except re.error as exc:
    raise SystemExit(f"error: pattern does not compile: {exc}")
hits = 0
for n, line in enumerate(open(a.path, encoding="utf-8"), 1):
    ms = list(rx.finditer(line))
    hits += bool(ms)
    for m in ms:
        print(f"line {n}: {m.group(0)!r} groups={m.groups()}")
print(f"{hits} matching line(s) for /{a.pattern}/")
