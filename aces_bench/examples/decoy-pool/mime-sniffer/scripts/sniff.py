#!/usr/bin/env python3
"""Identify file types from their magic bytes (PNG, JPEG, PDF, ZIP, gzip, ELF, ...) regardless of the file extension.

Usage: python3 scripts/sniff.py <files...>

Standard library only.
"""

import sys

SIGNATURES = [
    (b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
    (b"%PDF-", "application/pdf"), (b"PK\x03\x04", "application/zip"), (b"\x1f\x8b", "application/gzip"),
    (b"\x7fELF", "application/x-elf"), (b"RIFF", "audio/wav or other RIFF"), (b"SQLite format 3\x00", "application/x-sqlite3"),
]
if len(sys.argv) < 2:
    sys.exit("usage: sniff.py <files...>")
for path in sys.argv[1:]:
    head = open(path, "rb").read(64)
    kind = next((m for sig, m in SIGNATURES if head.startswith(sig)), None)
    if kind is None:
        try:
            head.decode("utf-8")
            kind = "text/plain" if head else "empty"
        except UnicodeDecodeError:
            kind = "application/octet-stream (unknown)"
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    print(f"{path}: {kind}" + (f"  (extension .{ext})" if ext else ""))
