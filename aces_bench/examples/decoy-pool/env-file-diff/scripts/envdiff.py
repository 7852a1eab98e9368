#!/usr/bin/env python3
"""Compare two dotenv (.env) files and list keys that are missing, added or changed, masking secret-looking values.

Usage: python3 scripts/envdiff.py <old.env> <new.env>

Standard library only.
"""

import re, sys

SECRET = re.compile(r"(KEY|SECRET|TOKEN|PASSWORD|PASS)", re.I)

def load(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.removeprefix("export ").split("=", 1)
        out[k.strip()] = v.strip().strip('"').strip("'")
    return out

def show(k, v):
    return "****" if SECRET.search(k) else v

if len(sys.argv) != 3:
    sys.exit("usage: envdiff.py <old.env> <new.env>")
a, b = load(sys.argv[1]), load(sys.argv[2])
for k in sorted(a.keys() | b.keys()):
    if k not in b:
        print(f"- {k} (only in {sys.argv[1]})")
    elif k not in a:
        print(f"+ {k}={show(k, b[k])}")
    elif a[k] != b[k]:
        print(f"~ {k}: {show(k, a[k])} -> {show(k, b[k])}")
