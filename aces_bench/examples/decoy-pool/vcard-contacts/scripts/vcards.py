#!/usr/bin/env python3
"""Extract names, emails, phone numbers and organisations from a vCard (.vcf) contacts export as CSV.

Usage: python3 scripts/vcards.py <contacts.vcf>

Standard library only.
"""

import csv, sys

if len(sys.argv) != 2:
    sys.exit("usage: vcards.py <contacts.vcf>")
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["name", "email", "phone", "org"])
card = None
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if line.upper() == "BEGIN:VCARD":
        card = {"FN": "", "EMAIL": [], "TEL": [], "ORG": ""}
    elif line.upper() == "END:VCARD" and card is not None:
        out.writerow([card["FN"], ";".join(card["EMAIL"]), ";".join(card["TEL"]), card["ORG"]])
        card = None
    elif card is not None and ":" in line:
        key, value = line.split(":", 1)
        prop = key.split(";")[0].upper()
        if prop in ("EMAIL", "TEL"):
            card[prop].append(value.strip())
        elif prop == "FN":
            card["FN"] = value.strip()
        elif prop == "ORG":
            card["ORG"] = value.replace(";", " / ").strip()
