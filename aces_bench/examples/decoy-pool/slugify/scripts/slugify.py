#!/usr/bin/env python3
"""Turn titles into URL-safe slugs: lowercase ASCII, accents transliterated, words joined by hyphens, unique per file.

Usage: python3 scripts/slugify.py <titles.txt> [--max 60]

Standard library only.
"""

import argparse, re, unicodedata

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--max", type=int, default=60)
a = ap.parse_args()
used = {}
for line in open(a.path, encoding="utf-8"):
    title = line.strip()
    if not title:
        continue
    ascii_ = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[: a.max].rstrip("-") or "untitled"
    n = used.get(slug, 0)
    used[slug] = n + 1
    print(f"{title} -> {slug if n == 0 else f'{slug}-{n + 1}'}")
