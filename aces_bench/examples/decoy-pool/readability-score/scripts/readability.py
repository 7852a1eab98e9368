#!/usr/bin/env python3
"""Compute Flesch reading ease and Flesch-Kincaid grade level of English text, with sentence and word counts.

Usage: python3 scripts/readability.py <text.txt>

Standard library only.
"""

import re, sys

def syllables(word):
    groups = re.findall(r"[aeiouy]+", word.lower())
    n = len(groups) - (1 if word.lower().endswith("e") and len(groups) > 1 else 0)
    return max(n, 1)

if len(sys.argv) != 2:
    sys.exit("usage: readability.py <text.txt>")
text = open(sys.argv[1], encoding="utf-8").read()
sentences = max(len(re.findall(r"[.!?]+(?:\s|$)", text)), 1)
words = re.findall(r"[A-Za-z']+", text)
if not words:
    sys.exit("error: no words")
syl = sum(syllables(w) for w in words)
ease = 206.835 - 1.015 * len(words) / sentences - 84.6 * syl / len(words)
grade = 0.39 * len(words) / sentences + 11.8 * syl / len(words) - 15.59
print(f"{sentences} sentences, {len(words)} words, {syl} syllables")
print(f"Flesch reading ease {ease:.1f}, Flesch-Kincaid grade {grade:.1f}")
