"""Sum (or average with --mean) a CSV column, skipping blank cells."""
import csv
import sys

path, column = sys.argv[1], sys.argv[2]
with open(path, newline="") as fh:
    values = [float(r[column]) for r in csv.DictReader(fh) if r[column].strip()]
if "--mean" in sys.argv[3:]:
    print(f"mean={sum(values) / len(values):.2f}")
else:
    print(f"total={sum(values):.2f}")
