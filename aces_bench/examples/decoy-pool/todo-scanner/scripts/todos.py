#!/usr/bin/env python3
"""Find TODO, FIXME, HACK and XXX comments in source files and list them with file, line and author tag.

Usage: python3 scripts/todos.py <sources...>

Standard library only.
"""

import re, sys

RX = re.compile(r"(?:#|//|/\*|--|;)\s*(TODO|FIXME|HACK|XXX)(?:\((\w+)\))?:?\s*(.*)")
if len(sys.argv) < 2:
    sys.exit("usage: todos.py <sources...>")
counts = {}
for path in sys.argv[1:]:
    for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        m = RX.search(line)
        if m:
            tag, who, text = m.groups()
            counts[tag] = counts.get(tag, 0) + 1
            print(f"{path}:{n}: {tag}{f' ({who})' if who else ''}: {text.strip().rstrip('*/').strip()}")
print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "no markers found")
