#!/usr/bin/env python3
"""Verify files against a SHA-256 checksum manifest (sha256sum format) and report missing or corrupted files.

Usage: python3 scripts/checksums.py <manifest.sha256>

Standard library only.
"""

import hashlib, pathlib, sys

if len(sys.argv) != 2:
    sys.exit("usage: checksums.py <manifest.sha256>")
manifest = pathlib.Path(sys.argv[1])
bad = 0
for line in manifest.read_text(encoding="utf-8").splitlines():
    if not line.strip():
        continue
    digest, _, name = line.partition("  ")
    path = manifest.parent / name.lstrip("*")
    if not path.is_file():
        print(f"MISSING  {name}"); bad += 1
        continue
    ok = hashlib.sha256(path.read_bytes()).hexdigest() == digest.strip().lower()
    print(f"{'OK      ' if ok else 'FAILED  '} {name}")
    bad += not ok
print(f"{bad} problem(s)")
