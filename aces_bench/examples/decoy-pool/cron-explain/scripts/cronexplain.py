#!/usr/bin/env python3
"""Explain crontab schedule lines in plain English, field by field, and flag out-of-range values.

Usage: python3 scripts/cronexplain.py <crontab>

Standard library only.
"""

import sys

FIELDS = [("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7)]
MACROS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *"}

def describe(expr, name, lo, hi):
    if expr == "*":
        return f"every {name}"
    parts = []
    for item in expr.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            rng = f"every {step} {name}s" if step else f"every {name}"
        else:
            a, _, b = base.partition("-")
            for v in (a, b):
                if v and not (v.isdigit() and lo <= int(v) <= hi):
                    raise ValueError(f"{name} value {v!r} is outside {lo}-{hi}")
            rng = f"{name} {a}-{b}" if b else f"{name} {a}"
            if step:
                rng += f" every {step}"
        parts.append(rng)
    return ", ".join(parts)

if len(sys.argv) != 2:
    sys.exit("usage: cronexplain.py <crontab>")
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    first, _, rest = line.partition(" ")
    if first in MACROS:
        line = MACROS[first] + " " + rest
    tokens = line.split(None, 5)
    if len(tokens) < 6:
        print(f"{line}\n  -> needs five schedule fields and a command")
        continue
    try:
        text = "; ".join(describe(t, *f) for t, f in zip(tokens[:5], FIELDS))
    except ValueError as exc:
        text = f"INVALID: {exc}"
    print(f"{' '.join(tokens[:5])}  {tokens[5]}\n  -> {text}")
