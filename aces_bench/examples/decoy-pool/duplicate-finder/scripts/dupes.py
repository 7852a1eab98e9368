#!/usr/bin/env python3
"""Find duplicate files in a folder tree by content hash and show how much space the copies waste.

Usage: python3 scripts/dupes.py <folder>

Standard library only.
"""

import collections, hashlib, os, sys

if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
    sys.exit("usage: dupes.py <folder>")
by_size = collections.defaultdict(list)
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        p = os.path.join(root, f)
        by_size[os.path.getsize(p)].append(p)
groups = collections.defaultdict(list)
for size, paths in by_size.items():
    if len(paths) > 1:
        for p in paths:
            with open(p, "rb") as fh:
                groups[(size, hashlib.sha256(fh.read()).hexdigest())].append(p)
wasted = 0
for (size, digest), paths in sorted(groups.items()):
    if len(paths) > 1:
        wasted += size * (len(paths) - 1)
        print(f"{len(paths)} copies, {size} bytes each ({digest[:12]}):")
        for p in sorted(paths):
            print(f"  {p}")
print(f"wasted: {wasted} bytes")
