#!/usr/bin/env python3
"""Read the width, height, bit depth and colour type of PNG images from their header without any imaging library.

Usage: python3 scripts/pnginfo.py <images...>

Standard library only.
"""

import struct, sys

COLOR = {0: "greyscale", 2: "RGB", 3: "palette", 4: "greyscale+alpha", 6: "RGBA"}
if len(sys.argv) < 2:
    sys.exit("usage: pnginfo.py <images...>")
for path in sys.argv[1:]:
    data = open(path, "rb").read(33)
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        print(f"{path}: not a PNG file")
        continue
    w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
    print(f"{path}: {w} x {h} px, {depth}-bit {COLOR.get(ctype, ctype)}")
