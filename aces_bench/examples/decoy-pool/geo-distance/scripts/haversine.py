#!/usr/bin/env python3
"""Compute great-circle (haversine) distances between latitude/longitude pairs and the total length of a route.

Usage: python3 scripts/haversine.py <waypoints.csv>

Standard library only.
"""

import csv, math, sys

def hav(a, b):
    (la1, lo1), (la2, lo2) = ((math.radians(x), math.radians(y)) for x, y in (a, b))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))

if len(sys.argv) != 2:
    sys.exit("usage: haversine.py <waypoints.csv>  (columns: name,lat,lon)")
rows = list(csv.DictReader(open(sys.argv[1], newline="", encoding="utf-8")))
total = 0.0
for prev, cur in zip(rows, rows[1:]):
    d = hav((float(prev["lat"]), float(prev["lon"])), (float(cur["lat"]), float(cur["lon"])))
    total += d
    print(f"{prev['name']} -> {cur['name']}: {d:.1f} km")
print(f"total: {total:.1f} km over {max(len(rows) - 1, 0)} leg(s)")
