#!/usr/bin/env python3
"""Convert an INI configuration file into JSON, with sections as objects and numbers and booleans typed.

Usage: python3 scripts/ini2json.py <config.ini>

Standard library only.
"""

import configparser, json, sys

def typed(v):
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v

if len(sys.argv) != 2:
    sys.exit("usage: ini2json.py <config.ini>")
cp = configparser.ConfigParser(interpolation=None)
cp.read(sys.argv[1], encoding="utf-8")
data = {s: {k: typed(v) for k, v in cp.items(s, raw=True)} for s in cp.sections()}
print(json.dumps(data, indent=2, sort_keys=True))
