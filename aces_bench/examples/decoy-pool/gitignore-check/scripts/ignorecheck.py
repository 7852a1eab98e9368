#!/usr/bin/env python3
"""Check which paths a .gitignore file would ignore, reporting the pattern that matched each path.

Usage: python3 scripts/ignorecheck.py <.gitignore> <paths.txt>

Standard library only.
"""

import fnmatch, sys

def rules(path):
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        neg = line.startswith("!")
        pat = line[1:] if neg else line
        dir_only = pat.endswith("/")
        pat = pat.rstrip("/")
        anchored = "/" in pat
        out.append((line, neg, pat.lstrip("/"), dir_only, anchored))
    return out

def matches(path, pat, dir_only, anchored):
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for i, cand in enumerate(candidates):
        is_dir = i < len(parts) - 1 or path.endswith("/")
        if dir_only and not is_dir:
            continue
        name = cand if anchored else cand.split("/")[-1]
        if fnmatch.fnmatch(name, pat.replace("**/", "*")) or fnmatch.fnmatch(cand, pat):
            return True
    return False

if len(sys.argv) != 3:
    sys.exit("usage: ignorecheck.py <.gitignore> <paths.txt>")
rs = rules(sys.argv[1])
for line in open(sys.argv[2], encoding="utf-8"):
    path = line.strip()
    if not path:
        continue
    verdict = None
    for raw, neg, pat, dir_only, anchored in rs:
        if matches(path, pat, dir_only, anchored):
            verdict = (not neg, raw)
    if verdict and verdict[0]:
        print(f"ignored   {path}  (by {verdict[1]!r})")
    else:
        print(f"tracked   {path}" + (f"  (re-included by {verdict[1]!r})" if verdict else ""))
