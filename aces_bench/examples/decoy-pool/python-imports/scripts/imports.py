#!/usr/bin/env python3
"""List the modules a Python file imports, split into standard library, third-party and local imports.

Usage: python3 scripts/imports.py <module.py>

Standard library only.
"""

import ast, sys

if len(sys.argv) != 2:
    sys.exit("usage: imports.py <module.py>")
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1])
names = set()
for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        names.update(a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        names.add("." * node.level + (node.module or "").split(".")[0])
stdlib = set(getattr(sys, "stdlib_module_names", ()))
groups = {"standard library": [], "third-party": [], "local (relative)": []}
for n in sorted(names):
    key = "local (relative)" if n.startswith(".") else "standard library" if n in stdlib else "third-party"
    groups[key].append(n)
for key, mods in groups.items():
    print(f"{key}: {', '.join(mods) or '-'}")
