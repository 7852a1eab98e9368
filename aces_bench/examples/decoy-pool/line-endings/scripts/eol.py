#!/usr/bin/env python3
"""Detect CRLF, LF and mixed line endings, trailing whitespace and a missing final newline in text files.

Usage: python3 scripts/eol.py <files...>

Standard library only.
"""

import sys

if len(sys.argv) < 2:
    sys.exit("usage: eol.py <files...>")
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    kind = "mixed" if crlf and lf else "CRLF" if crlf else "LF" if lf else "none"
    trailing = sum(1 for line in data.split(b"\n") if line.rstrip(b"\r") != line.rstrip(b"\r").rstrip(b" \t"))
    final = "yes" if data.endswith(b"\n") or not data else "no"
    print(f"{path}: {kind} endings ({crlf} CRLF, {lf} LF), {trailing} line(s) with trailing whitespace, final newline: {final}")
