#!/usr/bin/env python3
"""Convert colours between hex, RGB and HSL notations and report WCAG contrast against white and black.

Usage: python3 scripts/colors.py <colors.txt>

Standard library only.
"""

import colorsys, re, sys

def lum(rgb):
    def ch(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (ch(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b

def contrast(a, b):
    hi, lo = max(a, b), min(a, b)
    return (hi + 0.05) / (lo + 0.05)

if len(sys.argv) != 2:
    sys.exit("usage: colors.py <colors.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    t = line.strip()
    m = re.fullmatch(r"#?([0-9a-fA-F]{6}|[0-9a-fA-F]{3})", t)
    if m:
        h = m.group(1) if len(m.group(1)) == 6 else "".join(c * 2 for c in m.group(1))
        rgb = tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))
    elif re.fullmatch(r"\d{1,3},\s*\d{1,3},\s*\d{1,3}", t):
        rgb = tuple(min(int(x), 255) for x in t.split(","))
    else:
        if t:
            print(f"{t}: not a hex or r,g,b colour")
        continue
    hh, ll, ss = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    L = lum(rgb)
    print(f"{t}: #{''.join(f'{c:02x}' for c in rgb)} rgb{rgb} hsl({hh * 360:.0f}, {ss:.0%}, {ll:.0%}) "
          f"contrast vs white {contrast(L, 1.0):.2f}, vs black {contrast(L, 0.0):.2f}")
