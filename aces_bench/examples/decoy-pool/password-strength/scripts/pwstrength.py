#!/usr/bin/env python3
"""Score candidate passwords by estimated entropy and flag weak patterns such as dictionary words, repeats and sequences.

Usage: python3 scripts/pwstrength.py <passwords.txt>

Standard library only.
"""

import math, re, sys

COMMON = {"password", "letmein", "qwerty", "admin", "welcome", "dragon", "monkey", "summer", "winter"}

def score(pw):
    pool = sum(n for pat, n in ((r"[a-z]", 26), (r"[A-Z]", 26), (r"[0-9]", 10), (r"[^a-zA-Z0-9]", 33)) if re.search(pat, pw))
    bits = len(pw) * math.log2(pool) if pool else 0.0
    issues = []
    if any(w in pw.lower() for w in COMMON):
        issues.append("contains a common word"); bits /= 2
    if re.search(r"(.)\1\1", pw):
        issues.append("repeats a character 3+ times"); bits -= 10
    if re.search(r"(012|123|234|345|456|567|678|789|abc|bcd|cde)", pw.lower()):
        issues.append("contains a sequence"); bits -= 10
    if len(pw) < 12:
        issues.append("shorter than 12 characters")
    return max(bits, 0.0), issues

if len(sys.argv) != 2:
    sys.exit("usage: pwstrength.py <passwords.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    pw = line.rstrip("\n")
    if not pw:
        continue
    bits, issues = score(pw)
    verdict = "strong" if bits >= 60 and not issues else "fair" if bits >= 40 else "weak"
    print(f"{pw!r}: {bits:.0f} bits, {verdict}" + (f" ({'; '.join(issues)})" if issues else ""))
