#!/usr/bin/env python3
"""Build a fixed-rate loan amortization schedule: monthly payment, interest and principal split, and remaining balance.

Usage: python3 scripts/amortize.py <loan.json>

Standard library only.
"""

import json, sys

if len(sys.argv) != 2:
    sys.exit("usage: amortize.py <loan.json>  (keys: principal, annual_rate_percent, years)")
loan = json.load(open(sys.argv[1], encoding="utf-8"))
p, years = float(loan["principal"]), int(loan["years"])
r, n = float(loan["annual_rate_percent"]) / 100 / 12, years * 12
pay = p / n if r == 0 else p * r / (1 - (1 + r) ** -n)
balance, total_interest = p, 0.0
print(f"monthly payment: {pay:.2f}")
for month in range(1, n + 1):
    interest = balance * r
    balance -= pay - interest
    total_interest += interest
    if month % 12 == 0:
        print(f"year {month // 12:2d}: balance {max(balance, 0):12.2f}")
print(f"total interest: {total_interest:.2f}")
