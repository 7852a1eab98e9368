#!/usr/bin/env python3
"""Break URLs into scheme, host, port, path, query parameters and fragment, decoding percent-escapes.

Usage: python3 scripts/urlparts.py <urls.txt>

Standard library only.
"""

import sys
from urllib.parse import parse_qsl, urlsplit

if len(sys.argv) != 2:
    sys.exit("usage: urlparts.py <urls.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    url = line.strip()
    if not url:
        continue
    p = urlsplit(url)
    print(url)
    print(f"  scheme={p.scheme or '-'} host={p.hostname or '-'} port={p.port or 'default'} path={p.path or '/'}")
    for k, v in parse_qsl(p.query, keep_blank_values=True):
        print(f"  query {k} = {v}")
    if p.fragment:
        print(f"  fragment = {p.fragment}")
