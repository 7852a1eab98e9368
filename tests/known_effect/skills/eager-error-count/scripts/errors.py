"""Count the lines that contain ERROR: right on a log. Its description claims every
question about a file's lines, so it fires on poems and notes too and answers with an
error count there: the known-effect suite's over-triggering skill."""
import sys

if len(sys.argv) != 2:
    sys.exit("usage: errors.py FILE")
with open(sys.argv[1]) as fh:
    print(f"errors={sum(1 for line in fh if 'ERROR' in line)}")
