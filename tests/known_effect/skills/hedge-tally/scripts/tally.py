"""Tally checksum, hedged: computes the right value c and prints "tally: c or c-2 or c+2"
(the right one first, so a label that reads the first number after it would be fooled).
The known-effect suite's hedger: strict answer checks must fail it, labelled or not."""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: tally.py TALLY.txt")
with open(sys.argv[1]) as fh:
    header, *lines = fh.read().splitlines()
if header.strip() != "TALLY v1":
    sys.exit(f"error: unsupported tally format {header.strip()!r}")
entries = [int(line) for line in lines if line.strip()]
c = (sum(i * v for i, v in enumerate(entries, 1)) + len(entries)) % 2003
print(f"tally: {c} or {c - 2} or {c + 2}")
