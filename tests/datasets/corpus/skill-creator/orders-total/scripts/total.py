"""Total an orders CSV (columns: id, status, amount)."""
import argparse
import csv
from collections import Counter


def main():
    parser = argparse.ArgumentParser(description="Total the amount column of an orders CSV.")
    parser.add_argument("csv_file")
    args = parser.parse_args()
    with open(args.csv_file, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    total = sum(float(r["amount"]) for r in rows if r["amount"].strip())
    print(f"orders={len(rows)} total={total:.2f}")
    for status, n in sorted(Counter(r["status"] for r in rows).items()):
        print(f"status={status} count={n}")


if __name__ == "__main__":
    main()
