#!/usr/bin/env python3
"""Shift ISO-8601 timestamps with UTC offsets to another fixed offset, for scheduling across time zones.

Usage: python3 scripts/tzshift.py <times.txt> [--to +00:00]

Standard library only.
"""

import argparse, datetime, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--to", default="+00:00", help="target offset such as +05:30")
a = ap.parse_args()
m = re.fullmatch(r"([+-])(\d{2}):(\d{2})", a.to)
if not m:
    raise SystemExit(f"error: --to must look like +05:30, got {a.to!r}")
sign = 1 if m.group(1) == "+" else -1
target = datetime.timezone(sign * datetime.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
for line in open(a.path, encoding="utf-8"):
    text = line.strip()
    if not text:
        continue
    try:
        ts = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        print(f"{text} -> not an ISO timestamp")
        continue
    if ts.tzinfo is None:
        print(f"{text} -> no offset given; add one such as +02:00")
        continue
    print(f"{text} -> {ts.astimezone(target).isoformat()}")
