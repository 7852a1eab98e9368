#!/usr/bin/env python3
"""Validate ISBN-10 and ISBN-13 book numbers by checksum and convert valid ISBN-10s to ISBN-13.

Usage: python3 scripts/isbn.py <isbns.txt>

Standard library only.
"""

import sys

def check10(d):
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(d))
    return total % 11 == 0

def check13(d):
    return sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(d)) % 10 == 0

def to13(d):
    core = "978" + d[:9]
    return core + str((10 - sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(core)) % 10) % 10)

if len(sys.argv) != 2:
    sys.exit("usage: isbn.py <isbns.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    raw = line.strip()
    d = raw.replace("-", "").replace(" ", "").upper()
    if not d:
        continue
    if len(d) == 10 and d[:9].isdigit() and (d[9].isdigit() or d[9] == "X"):
        print(f"{raw}: ISBN-10 {'valid -> ' + to13(d) if check10(d) else 'INVALID checksum'}")
    elif len(d) == 13 and d.isdigit():
        print(f"{raw}: ISBN-13 {'valid' if check13(d) else 'INVALID checksum'}")
    else:
        print(f"{raw}: not an ISBN (need 10 or 13 digits)")
