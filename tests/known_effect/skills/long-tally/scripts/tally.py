"""Tally checksum: (sum(i * entry_i) + number of entries) mod 2003, TALLY v1 only."""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: tally.py TALLY.txt")
with open(sys.argv[1]) as fh:
    header, *lines = fh.read().splitlines()
if header.strip() != "TALLY v1":
    sys.exit(f"error: unsupported tally format {header.strip()!r}")
entries = [int(line) for line in lines if line.strip()]
print(f"tally={(sum(i * v for i, v in enumerate(entries, 1)) + len(entries)) % 2003}")
