#!/usr/bin/env python3
"""Measure docstring coverage of a Python module: which functions, classes and methods lack a docstring.

Usage: python3 scripts/doccov.py <module.py>

Standard library only.
"""

import ast, sys

if len(sys.argv) != 2:
    sys.exit("usage: doccov.py <module.py>")
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1])
items = [(n.name, n.lineno, ast.get_docstring(n) is not None) for n in ast.walk(tree)
         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
for name, line, ok in sorted(items, key=lambda i: i[1]):
    if not ok:
        print(f"missing: {name} (line {line})")
done = sum(ok for *_, ok in items)
print(f"coverage: {done}/{len(items)} = {done / len(items):.0%}" if items else "no public definitions")
