#!/usr/bin/env python3
"""Generate a nested table of contents with GitHub-style anchor links from the headings of a Markdown file.

Usage: python3 scripts/toc.py <doc.md>

Standard library only.
"""

import re, sys

def anchor(title, used):
    slug = re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")
    n = used.get(slug, 0)
    used[slug] = n + 1
    return slug if n == 0 else f"{slug}-{n}"

if len(sys.argv) != 2:
    sys.exit("usage: toc.py <doc.md>")
used, fenced = {}, False
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("```"):
        fenced = not fenced
        continue
    m = None if fenced else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
    if m:
        level, title = len(m.group(1)), m.group(2)
        print(f"{'  ' * (level - 1)}- [{title}](#{anchor(title, used)})")
