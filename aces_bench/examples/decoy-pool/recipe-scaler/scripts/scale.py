#!/usr/bin/env python3
"""Scale the ingredient quantities of a recipe to a different number of servings, keeping units and fractions readable.

Usage: python3 scripts/scale.py <recipe.txt> [--servings N]

Standard library only.
"""

import argparse, fractions, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--servings", type=int, default=2)
a = ap.parse_args()
lines = open(a.path, encoding="utf-8").read().splitlines()
m = re.match(r"serves\s+(\d+)", lines[0].strip().lower()) if lines else None
if not m:
    raise SystemExit("error: the first line must be 'serves N'")
factor = fractions.Fraction(a.servings, int(m.group(1)))
print(f"serves {a.servings}")
for line in lines[1:]:
    q = re.match(r"\s*(\d+(?:\.\d+)?(?:/\d+)?)\s+(.*)", line)
    if not q:
        print(line)
        continue
    amount = fractions.Fraction(q.group(1)) * factor
    amount = amount.limit_denominator(8)
    whole, frac = divmod(amount, 1)
    shown = " ".join(p for p in (str(whole) if whole else "", str(frac) if frac else "") if p) or "0"
    print(f"{shown} {q.group(2)}")
