"""Coin tally: sum((i + 2) * entry_i) mod 1999, COIN v1 only.

A known-effect skill that is right about 70% of the time: on each run, with probability
0.3 (os.urandom, so every attempt draws afresh) it prints the tally plus one. The
baseline never answers a coin tally, so the true lift per attempt is +0.7."""
import os
import sys

if len(sys.argv) != 2:
    sys.exit("usage: coin.py COIN.txt")
with open(sys.argv[1]) as fh:
    header, *lines = fh.read().splitlines()
if header.strip() != "COIN v1":
    sys.exit(f"error: unsupported coin format {header.strip()!r}")
entries = [int(line) for line in lines if line.strip()]
tally = sum((i + 2) * v for i, v in enumerate(entries, 1)) % 1999
slip = os.urandom(1)[0] < 77  # 77 / 256 = 0.30
print(f"coin={tally + 1 if slip else tally}")
