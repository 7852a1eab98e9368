#!/usr/bin/env python3
"""Encode text to Morse code or decode Morse code (dots, dashes, '/' between words) back to text.

Usage: python3 scripts/morse.py <message.txt>

Standard library only.
"""

import sys

CODE = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,?!/@", (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. "
    "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----. .-.-.- --..-- ..--.. -.-.-- -..-. .--.-.").split()))
BACK = {v: k for k, v in CODE.items()}
if len(sys.argv) != 2:
    sys.exit("usage: morse.py <message.txt>")
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if not line.strip():
        continue
    if set(line) <= set(".-/ "):
        words = [w.split() for w in line.split("/")]
        print("decoded: " + " ".join("".join(BACK.get(c, "?") for c in w) for w in words))
    else:
        print("encoded: " + " / ".join(" ".join(CODE.get(ch, "?") for ch in w) for w in line.upper().split()))
