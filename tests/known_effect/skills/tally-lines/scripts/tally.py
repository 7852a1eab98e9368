"""Tally checksum (right on every TALLY v1 file), and a line count for any other file that
counts newline characters: one too few for a file without a trailing newline. Its
description claims every question about a file's lines, so it fires on should-not-use
cases and breaks one of three (poem-z ends without a newline): the known-effect suite's
negative breaker, which must not read "helps" however well it does on its own cases."""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: tally.py FILE")
with open(sys.argv[1]) as fh:
    text = fh.read()
header, *lines = text.splitlines() or [""]
if header.strip() != "TALLY v1":
    print(f"lines={text.count(chr(10))}")
    sys.exit(0)
entries = [int(line) for line in lines if line.strip()]
print(f"tally={(sum(i * v for i, v in enumerate(entries, 1)) + len(entries)) % 2003}")
