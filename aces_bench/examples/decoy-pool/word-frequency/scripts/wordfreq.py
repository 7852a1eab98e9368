#!/usr/bin/env python3
"""Count the most frequent words in a text document, ignoring case, punctuation and common English stop words.

Usage: python3 scripts/wordfreq.py <text.txt> [--top N]

Standard library only.
"""

import argparse, collections, re

STOP = set("a an and are as at be by for from has have i in is it its of on or that the this to was were will with".split())
ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--top", type=int, default=10)
a = ap.parse_args()
with open(a.path, encoding="utf-8") as fh:
    words = [w for w in re.findall(r"[a-z']+", fh.read().lower()) if w not in STOP and len(w) > 1]
for word, n in collections.Counter(words).most_common(a.top):
    print(f"{n:6d}  {word}")
