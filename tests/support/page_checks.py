"""What a report page must never print (issue 33, item 7): a zero-width interval, more pairs
analysed than scheduled, an exclusion sentence without its number. Used by the report and
sequential-study tests on the pages they build."""

from __future__ import annotations

import html
import re

NUM = r"[+-]?\d+(?:\.\d+)?"
INTERVAL = re.compile(rf"\[\s*({NUM}),\s*({NUM})\s*\]")
ANALYSED = re.compile(r"pairs analysed</div>\s*<div class=\"big\">\s*(\d+)\s*/\s*(\d+)")
EXCLUDED = re.compile(r"(\d+) of (\d+) pairs are excluded \(([^)]*)\)")


def page_defects(page: str) -> list[str]:
    """Every self-contradiction found in the rendered HTML ``page``, as text."""
    text = html.unescape(page)
    out = []
    for m in INTERVAL.finditer(text):
        if m.group(1) == m.group(2) or float(m.group(1)) == float(m.group(2)):
            out.append(f"zero-width interval {m.group(0)}")
    for m in ANALYSED.finditer(text):
        if int(m.group(1)) > int(m.group(2)):
            out.append(f"pairs analysed {m.group(1)} / {m.group(2)}: more analysed than scheduled")
    for m in EXCLUDED.finditer(text):
        if not re.search(r"\d", m.group(3)):
            out.append(f"exclusion sentence without its number: {m.group(0)!r}")
    if re.search(r"se\s*=?\s*\d(?:\.\d+)?e-1\d", text):
        out.append("a standard error of rounding size printed")
    return out
