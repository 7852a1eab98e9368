#!/usr/bin/env python3
"""Show a unified line diff between two text files with a summary of lines added and removed.

Usage: python3 scripts/textdiff.py <old.txt> <new.txt>

Standard library only.
"""

import difflib, sys

if len(sys.argv) != 3:
    sys.exit("usage: textdiff.py <old.txt> <new.txt>")
a = open(sys.argv[1], encoding="utf-8").read().splitlines(keepends=True)
b = open(sys.argv[2], encoding="utf-8").read().splitlines(keepends=True)
diff = list(difflib.unified_diff(a, b, fromfile=sys.argv[1], tofile=sys.argv[2]))
sys.stdout.writelines(line if line.endswith("\n") else line + "\n" for line in diff)
added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
print(f"{added} line(s) added, {removed} removed")
