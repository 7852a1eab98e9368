"""Legacy ledger checksum: the plain sum of the entries modulo 9973 (any ledger version)."""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: plain_sum.py LEDGER.txt")
with open(sys.argv[1]) as fh:
    _header, *lines = fh.read().splitlines()
print(f"checksum={sum(int(line) for line in lines if line.strip()) % 9973}")
