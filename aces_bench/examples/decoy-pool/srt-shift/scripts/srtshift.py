#!/usr/bin/env python3
"""Shift all subtitle timings in an SRT file by a number of seconds to fix audio/subtitle sync.

Usage: python3 scripts/srtshift.py <subs.srt> [--seconds S]

Standard library only.
"""

import argparse, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--seconds", type=float, default=-1.0)
a = ap.parse_args()
RX = re.compile(r"(\d{2}):(\d{2}):(\d{2}),(\d{3})")

def shift(m):
    h, mi, s, ms = map(int, m.groups())
    t = max(((h * 60 + mi) * 60 + s) * 1000 + ms + round(a.seconds * 1000), 0)
    return f"{t // 3600000:02d}:{t // 60000 % 60:02d}:{t // 1000 % 60:02d},{t % 1000:03d}"

text = open(a.path, encoding="utf-8").read()
print(RX.sub(shift, text), end="")
