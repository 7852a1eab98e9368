#!/usr/bin/env python3
"""Convert between Roman numerals and Arabic integers in either direction, validating canonical numeral form.

Usage: python3 scripts/roman.py <numbers.txt>

Standard library only.
"""

import sys

VALS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]

def to_roman(n):
    out = ""
    for v, s in VALS:
        while n >= v:
            out += s; n -= v
    return out

def from_roman(s):
    total, i = 0, 0
    for v, sym in VALS:
        while s.startswith(sym, i):
            total += v; i += len(sym)
    if i != len(s) or to_roman(total) != s:
        raise ValueError("not a canonical Roman numeral")
    return total

if len(sys.argv) != 2:
    sys.exit("usage: roman.py <numbers.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    t = line.strip().upper()
    if not t:
        continue
    try:
        if t.isdigit():
            n = int(t)
            if not 1 <= n <= 3999:
                raise ValueError("out of range 1-3999")
            print(f"{t} = {to_roman(n)}")
        else:
            print(f"{t} = {from_roman(t)}")
    except ValueError as exc:
        print(f"{t}: {exc}")
