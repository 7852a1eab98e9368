#!/usr/bin/env python3
"""Convert quantities between metric and imperial units of length, mass, volume and temperature, one conversion per line.

Usage: python3 scripts/convert.py <conversions.txt>

Standard library only.
"""

import sys

FACTORS = {  # to the SI base of each dimension
    "m": ("length", 1.0), "km": ("length", 1000.0), "cm": ("length", 0.01), "mm": ("length", 0.001),
    "mi": ("length", 1609.344), "yd": ("length", 0.9144), "ft": ("length", 0.3048), "in": ("length", 0.0254),
    "kg": ("mass", 1.0), "g": ("mass", 0.001), "lb": ("mass", 0.45359237), "oz": ("mass", 0.028349523125),
    "l": ("volume", 1.0), "ml": ("volume", 0.001), "gal": ("volume", 3.785411784), "cup": ("volume", 0.2365882365),
}
TEMPS = {"c": (1.0, 0.0), "f": (5 / 9, -32.0), "k": (1.0, -273.15)}

def convert(v, src, dst):
    if src in TEMPS and dst in TEMPS:
        scale, shift = TEMPS[src]
        celsius = (v + shift) * scale if src != "k" else v - 273.15
        if dst == "c":
            return celsius
        return celsius * 9 / 5 + 32 if dst == "f" else celsius + 273.15
    (d1, f1), (d2, f2) = FACTORS[src], FACTORS[dst]
    if d1 != d2:
        raise ValueError(f"cannot convert {d1} to {d2}")
    return v * f1 / f2

if len(sys.argv) != 2:
    sys.exit("usage: convert.py <conversions.txt>")
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    parts = line.split()
    if not parts or parts[0].startswith("#"):
        continue
    try:
        value, src, dst = float(parts[0]), parts[1].lower(), parts[2].lower()
        print(f"{parts[0]} {src} = {convert(value, src, dst):.4g} {dst}")
    except (ValueError, IndexError, KeyError) as exc:
        print(f"line {n}: cannot convert {line.strip()!r} ({exc})")
