#!/usr/bin/env python3
"""List the entries of a ZIP archive with sizes and compression ratios, and test every entry's CRC.

Usage: python3 scripts/zipinfo.py <archive.zip>

Standard library only.
"""

import sys, zipfile

if len(sys.argv) != 2:
    sys.exit("usage: zipinfo.py <archive.zip>")
try:
    z = zipfile.ZipFile(sys.argv[1])
except zipfile.BadZipFile as exc:
    sys.exit(f"error: {exc}")
total_c = total_u = 0
for info in z.infolist():
    ratio = 1 - info.compress_size / info.file_size if info.file_size else 0
    total_c += info.compress_size; total_u += info.file_size
    print(f"{info.file_size:10d} {info.compress_size:10d} {ratio:6.1%}  {info.filename}")
bad = z.testzip()
print(f"{len(z.infolist())} entries, {total_u} bytes -> {total_c} bytes; CRC check: {'FAILED at ' + bad if bad else 'ok'}")
