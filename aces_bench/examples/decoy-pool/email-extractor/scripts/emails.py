#!/usr/bin/env python3
"""Extract unique email addresses from free text, grouped by domain, with obfuscated forms like 'name at domain dot com' normalised.

Usage: python3 scripts/emails.py <text.txt>

Standard library only.
"""

import collections, re, sys

if len(sys.argv) != 2:
    sys.exit("usage: emails.py <text.txt>")
text = open(sys.argv[1], encoding="utf-8").read()
text = re.sub(r"\s*[\[(]\s*at\s*[\])]\s*|\s+at\s+(?=[\w-]+\s*(?:[\[(]\s*dot|\s+dot\s))", "@", text, flags=re.I)
text = re.sub(r"\s*[\[(]\s*dot\s*[\])]\s*|\s+dot\s+", ".", text, flags=re.I)
found = sorted({m.lower() for m in re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text)})
by_domain = collections.defaultdict(list)
for e in found:
    by_domain[e.split("@")[1]].append(e)
for domain in sorted(by_domain):
    print(f"{domain}: {', '.join(by_domain[domain])}")
print(f"{len(found)} unique address(es)")
