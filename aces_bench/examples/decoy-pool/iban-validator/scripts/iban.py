#!/usr/bin/env python3
"""Validate IBAN bank account numbers: country length and the ISO 13616 mod-97 check digits.

Usage: python3 scripts/iban.py <ibans.txt>

Standard library only.
"""

import sys

LENGTHS = {"DE": 22, "FR": 27, "GB": 22, "NL": 18, "ES": 24, "IT": 27, "BE": 16, "CH": 21, "AT": 20, "IE": 22}
if len(sys.argv) != 2:
    sys.exit("usage: iban.py <ibans.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    raw = line.strip()
    iban = raw.replace(" ", "").upper()
    if not iban:
        continue
    if not iban.isalnum() or len(iban) < 15:
        print(f"{raw}: not an IBAN")
        continue
    want = LENGTHS.get(iban[:2])
    if want and len(iban) != want:
        print(f"{raw}: INVALID length {len(iban)} for {iban[:2]} (expected {want})")
        continue
    number = int("".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4]))
    print(f"{raw}: {'valid' if number % 97 == 1 else 'INVALID check digits'}")
