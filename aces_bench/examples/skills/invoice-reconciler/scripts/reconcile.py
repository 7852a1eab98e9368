#!/usr/bin/env python3
"""Reconcile an invoice ledger against a bank statement.

Usage: python3 scripts/reconcile.py LEDGER.csv BANK.csv

Matching, in order:
  1. by invoice reference: the ledger's ``invoice_id`` found in the bank line's
     ``reference`` column or, failing that, in its ``description``;
  2. bank lines without a usable reference are matched to a still-open ledger
     entry with exactly the same amount, only when that match is unique.
A reference match whose amounts differ is reported as an amount mismatch.

Standard library only; runs on Python 3.8+.
"""

import csv
import re
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

EXIT_USAGE = 2
_REF = re.compile(r"\bINV[-_ ]?(\d+)\b", re.IGNORECASE)
LEDGER_ID_COLUMNS = ("invoice_id", "invoice", "invoice_no", "reference")
AMOUNT_COLUMNS = ("amount", "total", "value")


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def parse_amount(raw, where):
    """Parse '1,234.50', '$1,234.50', '(12.00)' or '-12.00' into a Decimal."""
    text = raw.strip().replace("$", "").replace("\u20ac", "").replace("\u00a3", "").replace(",", "")
    negative = text.startswith("(") and text.endswith(")")
    if negative:
        text = text[1:-1]
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise InputError("%s: amount %r is not a number" % (where, raw)) from None
    return -value if negative else value


def fmt(amount):
    return f"{amount:,.2f}"


def find_column(header, candidates, path, role):
    lowered = {name.strip().lower(): name for name in header}
    for c in candidates:
        if c in lowered:
            return lowered[c]
    raise InputError(
        "%s: no %s column (looked for %s; found %s)"
        % (path, role, ", ".join(candidates), ", ".join(header) or "no header")
    )


def read_rows(path):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found" % path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("%s: not a UTF-8 text file (expected CSV)" % path) from None
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames:
        raise InputError("%s: empty file (expected a CSV header row)" % path)
    return reader.fieldnames, list(reader)


def normalise_ref(text):
    m = _REF.search(text or "")
    return "INV-%s" % m.group(1) if m else None


def load_ledger(path):
    header, rows = read_rows(path)
    id_col = find_column(header, LEDGER_ID_COLUMNS, path, "invoice id")
    amount_col = find_column(header, AMOUNT_COLUMNS, path, "amount")
    entries = []
    seen = set()
    for line_no, row in enumerate(rows, start=2):
        ref = normalise_ref(row.get(id_col))
        if ref is None:
            raise InputError("%s line %d: invoice id %r is not like INV-1234" % (path, line_no, row.get(id_col)))
        if ref in seen:
            raise InputError("%s line %d: invoice %s appears twice" % (path, line_no, ref))
        seen.add(ref)
        amount = parse_amount(row.get(amount_col) or "", "%s line %d" % (path, line_no))
        entries.append({"ref": ref, "amount": amount, "row": row})
    return entries


def load_bank(path):
    header, rows = read_rows(path)
    amount_col = find_column(header, AMOUNT_COLUMNS, path, "amount")
    lowered = {name.strip().lower(): name for name in header}
    ref_col = lowered.get("reference")
    desc_col = lowered.get("description") or lowered.get("details") or lowered.get("memo")
    date_col = lowered.get("date") or lowered.get("booking_date")
    lines = []
    for line_no, row in enumerate(rows, start=2):
        amount = parse_amount(row.get(amount_col) or "", "%s line %d" % (path, line_no))
        ref = normalise_ref(row.get(ref_col) if ref_col else None) or normalise_ref(
            row.get(desc_col) if desc_col else None
        )
        lines.append(
            {
                "ref": ref,
                "amount": amount,
                "date": (row.get(date_col) or "").strip() if date_col else "",
                "description": (row.get(desc_col) or "").strip() if desc_col else "",
            }
        )
    return lines


def reconcile(ledger, bank):
    """Return matched pairs, amount mismatches and the unmatched entries of each side."""
    open_ledger = {e["ref"]: e for e in ledger}
    matched, mismatched, leftover_bank = [], [], []
    for line in bank:
        entry = open_ledger.pop(line["ref"], None) if line["ref"] else None
        if entry is None:
            leftover_bank.append(line)
        elif entry["amount"] == line["amount"]:
            matched.append((entry, line))
        else:
            mismatched.append((entry, line))
    unmatched_bank = []
    for line in leftover_bank:
        candidates = [e for e in open_ledger.values() if e["amount"] == line["amount"]]
        if len(candidates) == 1:
            matched.append((open_ledger.pop(candidates[0]["ref"]), line))
        else:
            unmatched_bank.append(line)
    return matched, mismatched, list(open_ledger.values()), unmatched_bank


def report(ledger, bank, result):
    matched, mismatched, unmatched_ledger, unmatched_bank = result
    ledger_total = sum((e["amount"] for e in ledger), Decimal(0))
    bank_total = sum((b["amount"] for b in bank), Decimal(0))
    out = [
        "Ledger: %d entries, total %s" % (len(ledger), fmt(ledger_total)),
        "Bank:   %d entries, total %s" % (len(bank), fmt(bank_total)),
        "Difference (ledger - bank): %s" % fmt(ledger_total - bank_total),
        "Matched: %d" % len(matched),
        "Amount mismatches (%d):" % len(mismatched),
    ]
    for entry, line in mismatched:
        out.append(
            "  %s ledger %s bank %s (diff %s)"
            % (entry["ref"], fmt(entry["amount"]), fmt(line["amount"]), fmt(entry["amount"] - line["amount"]))
        )
    out.append("Unmatched ledger entries (%d):" % len(unmatched_ledger))
    for entry in unmatched_ledger:
        out.append("  %s %s" % (entry["ref"], fmt(entry["amount"])))
    out.append("Unmatched bank entries (%d):" % len(unmatched_bank))
    for line in unmatched_bank:
        out.append("  %s %r %s" % (line["date"] or "-", line["description"], fmt(line["amount"])))
    return "\n".join(out)


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print("usage: reconcile.py LEDGER.csv BANK.csv", file=sys.stderr)
        return EXIT_USAGE
    try:
        ledger = load_ledger(argv[1])
        bank = load_bank(argv[2])
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    print(report(ledger, bank, reconcile(ledger, bank)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
