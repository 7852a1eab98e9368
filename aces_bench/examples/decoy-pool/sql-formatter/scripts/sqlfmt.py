#!/usr/bin/env python3
"""Reformat SQL queries for readability: uppercase keywords and start each major clause on its own line.

Usage: python3 scripts/sqlfmt.py <query.sql>

Standard library only.
"""

import re, sys

CLAUSES = ["select", "from", "where", "group by", "having", "order by", "limit", "union", "left join", "right join", "inner join", "join", "on", "and", "or", "insert into", "values", "update", "set", "delete from"]
WORDS = set(" ".join(CLAUSES).split()) | {"as", "in", "not", "null", "is", "desc", "asc", "distinct", "count", "sum", "avg", "case", "when", "then", "else", "end"}

if len(sys.argv) != 2:
    sys.exit("usage: sqlfmt.py <query.sql>")
text = open(sys.argv[1], encoding="utf-8").read()
tokens = re.findall(r"'(?:[^']|'')*'|\w+|[^\w\s]", text)
out = " ".join(t.upper() if t.lower() in WORDS else t for t in tokens)
out = re.sub(r"\s+([,;)])", r"\1", out).replace("( ", "(")
out = re.sub(r"(?<=\w) \. (?=\w)", ".", out)
# One pass, longest clause first, so the JOIN of a LEFT JOIN is not split again.
alternation = "|".join(re.escape(c.upper()) for c in sorted(CLAUSES, key=len, reverse=True))
out = re.sub(rf"\s+({alternation})\b", lambda m: "\n" + ("  " if m.group(1) in ("AND", "OR", "ON") else "") + m.group(1), out)
print(out.strip())
