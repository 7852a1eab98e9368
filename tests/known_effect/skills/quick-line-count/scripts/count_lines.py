"""Count lines by counting newline characters.

Known by construction to be wrong on a file whose last line has no trailing newline
(it misses that line), and it says nothing about it: the known-effect suite's harmful skill.
"""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: count_lines.py NOTES.txt")
with open(sys.argv[1], "rb") as fh:
    newlines = fh.read().count(b"\n")
print(f"lines={newlines}")
