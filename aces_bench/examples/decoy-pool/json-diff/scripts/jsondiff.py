#!/usr/bin/env python3
"""Compare two JSON documents structurally and list added, removed and changed values by JSON path.

Usage: python3 scripts/jsondiff.py <old.json> <new.json>

Standard library only.
"""

import json, sys

def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(a.keys() | b.keys()):
            p = f"{path}.{k}"
            if k not in b:
                out.append(f"- {p}: {json.dumps(a[k])}")
            elif k not in a:
                out.append(f"+ {p}: {json.dumps(b[k])}")
            else:
                diff(a[k], b[k], p, out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            p = f"{path}[{i}]"
            if i >= len(b):
                out.append(f"- {p}: {json.dumps(a[i])}")
            elif i >= len(a):
                out.append(f"+ {p}: {json.dumps(b[i])}")
            else:
                diff(a[i], b[i], p, out)
    elif a != b:
        out.append(f"~ {path}: {json.dumps(a)} -> {json.dumps(b)}")

if len(sys.argv) != 3:
    sys.exit("usage: jsondiff.py <old.json> <new.json>")
out = []
diff(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), "$", out)
print("\n".join(out) if out else "no differences")
