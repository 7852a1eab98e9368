"""Position-weighted ledger checksum: sum(i * entry_i) mod 9973, LEDGER v1 only."""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: checksum.py LEDGER.txt")
with open(sys.argv[1]) as fh:
    header, *lines = fh.read().splitlines()
if header.strip() != "LEDGER v1":
    print(f"error: unsupported ledger format {header.strip()!r} (only 'LEDGER v1')", file=sys.stderr)
    sys.exit(2)
entries = [int(line) for line in lines if line.strip()]
print(f"checksum={sum(i * v for i, v in enumerate(entries, 1)) % 9973}")
