#!/usr/bin/env python3
"""Order tickets into a release plan that respects dependencies, priority and capacity.

Usage: python3 scripts/plan.py TICKETS.csv [--capacity POINTS]

TICKETS.csv columns: id, title, priority (P0..P3), points, depends_on (ids separated
by ';' or spaces, may be empty). Tickets are ordered topologically; among tickets
whose dependencies are done, higher priority goes first, then fewer points, then id.
Releases are filled in that order up to the capacity (default 20 points); a ticket
never shares a release with a ticket it depends on unless that ticket came earlier in
the same release.

Standard library only; runs on Python 3.8+.
"""

import csv
import heapq
import re
import sys
from pathlib import Path

EXIT_USAGE = 2
REQUIRED = ("id", "title", "priority", "points")
_PRIORITY = re.compile(r"^P([0-3])$", re.IGNORECASE)


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def load_tickets(path):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found" % path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("%s: not a UTF-8 CSV file" % path) from None
    reader = csv.DictReader(text.splitlines())
    header = [h.strip().lower() for h in reader.fieldnames or []]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError("%s: missing column(s) %s (found: %s)" % (path, ", ".join(missing), ", ".join(header) or "none"))
    tickets = {}
    for line_no, raw in enumerate(reader, start=2):
        row = {k.strip().lower(): (v or "").strip() for k, v in raw.items() if k}
        tid = row["id"]
        if not tid:
            raise InputError("%s line %d: empty id" % (path, line_no))
        if tid in tickets:
            raise InputError("%s line %d: ticket %s listed twice" % (path, line_no, tid))
        m = _PRIORITY.match(row["priority"])
        if not m:
            raise InputError("%s line %d: priority %r must be P0, P1, P2 or P3" % (path, line_no, row["priority"]))
        try:
            points = int(row["points"])
            if points < 0:
                raise ValueError
        except ValueError:
            raise InputError("%s line %d: points %r must be a whole number >= 0" % (path, line_no, row["points"])) from None
        deps = [d for d in re.split(r"[;\s,]+", row.get("depends_on", "")) if d]
        tickets[tid] = {"id": tid, "title": row["title"], "priority": int(m.group(1)), "points": points, "deps": deps}
    if not tickets:
        raise InputError("%s: no tickets" % path)
    for t in tickets.values():
        unknown = [d for d in t["deps"] if d not in tickets]
        if unknown:
            raise InputError("%s: ticket %s depends on unknown ticket(s) %s" % (path, t["id"], ", ".join(unknown)))
    return tickets


def find_cycle(tickets, remaining):
    """A dependency cycle among ``remaining`` ids, as a list ending where it started."""
    start = min(remaining)
    path, seen = [start], {start}
    node = start
    while True:
        node = next(d for d in tickets[node]["deps"] if d in remaining)
        if node in seen:
            return path[path.index(node):] + [node]
        path.append(node)
        seen.add(node)


def order(tickets):
    """Topological order with (priority, points, id) as the tie-break among ready tickets."""
    waiting = {tid: set(t["deps"]) for tid, t in tickets.items()}
    dependants = {tid: [] for tid in tickets}
    for tid, t in tickets.items():
        for d in t["deps"]:
            dependants[d].append(tid)
    key = lambda tid: (tickets[tid]["priority"], tickets[tid]["points"], tid)
    ready = [key(tid) for tid, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    out = []
    while ready:
        tid = heapq.heappop(ready)[2]
        out.append(tid)
        for nxt in dependants[tid]:
            waiting[nxt].discard(tid)
            if not waiting[nxt]:
                heapq.heappush(ready, key(nxt))
    if len(out) != len(tickets):
        cycle = find_cycle(tickets, set(tickets) - set(out))
        raise InputError("dependency cycle: %s" % " -> ".join(cycle))
    return out


def pack(tickets, ordered, capacity):
    releases, current, used = [], [], 0
    for tid in ordered:
        pts = tickets[tid]["points"]
        if pts > capacity:
            raise InputError("ticket %s has %d points, more than the release capacity %d" % (tid, pts, capacity))
        if used + pts > capacity:
            releases.append(current)
            current, used = [], 0
        current.append(tid)
        used += pts
    if current:
        releases.append(current)
    return releases


def report(tickets, releases, capacity):
    total = sum(t["points"] for t in tickets.values())
    out = ["Tickets: %d, %d points, capacity %d points per release -> %d releases" % (len(tickets), total, capacity, len(releases))]
    for n, rel in enumerate(releases, 1):
        pts = sum(tickets[t]["points"] for t in rel)
        out.append("Release %d (%d/%d points):" % (n, pts, capacity))
        for tid in rel:
            t = tickets[tid]
            after = " (after %s)" % ", ".join(t["deps"]) if t["deps"] else ""
            out.append("  %s P%d %2d pts  %s%s" % (tid, t["priority"], t["points"], t["title"], after))
    return "\n".join(out)


def main(argv):
    args, capacity = argv[1:], 20
    if "--capacity" in args:
        i = args.index("--capacity")
        try:
            capacity = int(args[i + 1])
            if capacity < 1:
                raise ValueError
        except (IndexError, ValueError):
            print("error: --capacity needs a positive whole number of points", file=sys.stderr)
            return EXIT_USAGE
        del args[i : i + 2]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: plan.py TICKETS.csv [--capacity POINTS]", file=sys.stderr)
        return EXIT_USAGE
    try:
        tickets = load_tickets(args[0])
        releases = pack(tickets, order(tickets), capacity)
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    print(report(tickets, releases, capacity))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
