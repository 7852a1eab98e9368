#!/usr/bin/env python3
"""Validate card and account numbers with the Luhn checksum and identify the card network from the prefix.

Usage: python3 scripts/luhn.py <numbers.txt>

Standard library only.
"""

import sys

def luhn(d):
    total = 0
    for i, c in enumerate(reversed(d)):
        n = int(c)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0

def network(d):
    if d.startswith("4"):
        return "Visa"
    if d[:2] in ("51", "52", "53", "54", "55") or 2221 <= int(d[:4]) <= 2720:
        return "Mastercard"
    if d[:2] in ("34", "37"):
        return "American Express"
    return "unknown network"

if len(sys.argv) != 2:
    sys.exit("usage: luhn.py <numbers.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    d = "".join(ch for ch in line if ch.isdigit())
    if len(d) < 12:
        continue
    masked = "*" * (len(d) - 4) + d[-4:]
    print(f"{masked}: {'valid' if luhn(d) else 'INVALID'} ({network(d)})")
