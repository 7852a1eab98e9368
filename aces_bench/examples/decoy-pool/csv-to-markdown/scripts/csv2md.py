#!/usr/bin/env python3
"""Render a CSV file as an aligned Markdown table, right-aligning numeric columns.

Usage: python3 scripts/csv2md.py <table.csv>

Standard library only.
"""

import csv, sys

def numeric(v):
    try:
        float(v.replace(",", ""))
        return True
    except ValueError:
        return False

if len(sys.argv) != 2:
    sys.exit("usage: csv2md.py <table.csv>")
rows = [[c.replace("|", "\\|") for c in r] for r in csv.reader(open(sys.argv[1], newline="", encoding="utf-8"))]
if not rows:
    sys.exit("error: empty CSV")
head, body = rows[0], rows[1:]
widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(len(head))]
nums = [bool(body) and all(numeric(r[i]) for r in body if i < len(r)) for i in range(len(head))]
cell = lambda v, i: v.rjust(widths[i]) if nums[i] else v.ljust(widths[i])
print("| " + " | ".join(cell(h, i) for i, h in enumerate(head)) + " |")
print("|" + "|".join(("-" * (w + 1) + ":") if nums[i] else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|")
for r in body:
    print("| " + " | ".join(cell(r[i] if i < len(r) else "", i) for i in range(len(head))) + " |")
