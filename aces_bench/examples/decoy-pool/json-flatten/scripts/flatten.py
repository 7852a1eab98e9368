#!/usr/bin/env python3
"""Flatten nested JSON documents into dotted key paths with their scalar values, one per line.

Usage: python3 scripts/flatten.py <input.json>

Standard library only.
"""

import json, sys

def walk(value, prefix, out):
    if isinstance(value, dict):
        for k in sorted(value):
            walk(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            walk(v, f"{prefix}[{i}]", out)
    else:
        out.append((prefix or "$", json.dumps(value)))

if len(sys.argv) != 2:
    sys.exit("usage: flatten.py <input.json>")
with open(sys.argv[1], encoding="utf-8") as fh:
    data = json.load(fh)
pairs = []
walk(data, "", pairs)
for key, value in pairs:
    print(f"{key} = {value}")
