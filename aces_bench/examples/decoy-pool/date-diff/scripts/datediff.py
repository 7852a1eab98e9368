#!/usr/bin/env python3
"""Count calendar days and Monday-to-Friday business days between pairs of dates.

Usage: python3 scripts/datediff.py <pairs.txt>

Standard library only.
"""

import datetime, sys

if len(sys.argv) != 2:
    sys.exit("usage: datediff.py <pairs.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.split()
    if len(parts) != 2:
        continue
    try:
        a, b = (datetime.date.fromisoformat(p) for p in parts)
    except ValueError:
        print(f"{line.strip()}: dates must be YYYY-MM-DD")
        continue
    lo, hi = min(a, b), max(a, b)
    days = (hi - lo).days
    full, rest = divmod(days, 7)
    business = full * 5 + sum(1 for i in range(rest) if (lo + datetime.timedelta(days=full * 7 + i)).weekday() < 5)
    print(f"{a} -> {b}: {days} days, {business} business days")
