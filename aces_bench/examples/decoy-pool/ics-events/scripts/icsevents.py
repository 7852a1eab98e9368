#!/usr/bin/env python3
"""List the events of an iCalendar (.ics) file in start-time order with duration, location and recurrence.

Usage: python3 scripts/icsevents.py <calendar.ics>

Standard library only.
"""

import datetime, sys

def parse_dt(v):
    v = v.rstrip("Z")
    fmt = "%Y%m%dT%H%M%S" if "T" in v else "%Y%m%d"
    return datetime.datetime.strptime(v, fmt)

if len(sys.argv) != 2:
    sys.exit("usage: icsevents.py <calendar.ics>")
lines = []
for raw in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if raw.startswith((" ", "\t")) and lines:
        lines[-1] += raw[1:]  # folded line
    else:
        lines.append(raw)
events, cur = [], None
for line in lines:
    if line == "BEGIN:VEVENT":
        cur = {}
    elif line == "END:VEVENT" and cur is not None:
        events.append(cur); cur = None
    elif cur is not None and ":" in line:
        key, value = line.split(":", 1)
        cur[key.split(";")[0]] = value
for e in sorted(events, key=lambda e: e.get("DTSTART", "")):
    start = parse_dt(e["DTSTART"])
    dur = parse_dt(e["DTEND"]) - start if "DTEND" in e else None
    extra = f" @ {e['LOCATION']}" if "LOCATION" in e else ""
    rec = f" (repeats: {e['RRULE']})" if "RRULE" in e else ""
    print(f"{start:%Y-%m-%d %H:%M}  {e.get('SUMMARY', '(no title)')}{extra}" + (f" [{dur}]" if dur else "") + rec)
