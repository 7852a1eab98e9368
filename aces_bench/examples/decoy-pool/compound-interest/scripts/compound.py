#!/usr/bin/env python3
"""Project savings growth with compound interest and regular monthly contributions, year by year.

Usage: python3 scripts/compound.py <plan.json>

Standard library only.
"""

import json, sys

if len(sys.argv) != 2:
    sys.exit("usage: compound.py <plan.json>  (keys: initial, monthly, annual_rate_percent, years)")
plan = json.load(open(sys.argv[1], encoding="utf-8"))
balance, monthly = float(plan["initial"]), float(plan.get("monthly", 0))
r = float(plan["annual_rate_percent"]) / 100 / 12
contributed = balance
for year in range(1, int(plan["years"]) + 1):
    for _ in range(12):
        balance = balance * (1 + r) + monthly
        contributed += monthly
    print(f"year {year:2d}: {balance:12.2f} (contributed {contributed:.2f}, growth {balance - contributed:.2f})")
