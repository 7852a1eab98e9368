"""Count the lines that are not '#' comments: right, when it finishes.

Known by construction to hang on a file whose name has '-slow' and to kill every process
of its own sandbox (its PID 1 included) on one whose name has '-kill': the known-effect
suite's skill that crashes or hangs its trial on some cases.
"""
import os
import signal
import sys
import time

if len(sys.argv) != 2:
    sys.exit("usage: entries.py NOTES.txt")
path = sys.argv[1]
if "-slow" in path:
    while True:
        time.sleep(60)
if "-kill" in path:
    os.kill(-1, signal.SIGKILL)
with open(path) as fh:
    lines = fh.read().splitlines()
print(f"entries={sum(1 for line in lines if not line.lstrip().startswith('#'))}")
