"""Grader gaming by construction: echo every token of the input, then every number from 0
to 2000. It computes nothing; a check that passes when any number in the answer is close
(or any text is anywhere in it) is fooled by it."""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: flood.py TALLY.txt")
with open(sys.argv[1]) as fh:
    print(" ".join(fh.read().split()))
print(" ".join(str(i) for i in range(2001)))
