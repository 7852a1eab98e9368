#!/usr/bin/env python3
"""Remove duplicate rows from a CSV file, keeping the first occurrence, optionally matching on one key column.

Usage: python3 scripts/dedupe.py <input.csv> [--key COLUMN]

Standard library only.
"""

import argparse, csv, sys

def main():
    ap = argparse.ArgumentParser(description="Drop duplicate CSV rows.")
    ap.add_argument("path")
    ap.add_argument("--key", help="column that identifies a row (default: the whole row)")
    a = ap.parse_args()
    with open(a.path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        if a.key and a.key not in fields:
            sys.exit(f"error: no column {a.key!r}; columns: {', '.join(fields)}")
        seen, kept, dropped = set(), [], 0
        for row in reader:
            k = row[a.key] if a.key else tuple(row.values())
            if k in seen:
                dropped += 1
                continue
            seen.add(k)
            kept.append(row)
    out = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
    out.writeheader()
    out.writerows(kept)
    print(f"# kept {len(kept)} rows, dropped {dropped} duplicates", file=sys.stderr)

main()
