#!/usr/bin/env python3
"""Latency percentiles for each endpoint of an HTTP access log.

Usage: python3 scripts/latency.py ACCESS.log [--top N]

Reads nginx/Apache "combined" lines with the request time appended, either as a
bare last field in seconds (nginx ``$request_time``) or as ``rt=``/``request_time=``
(seconds) or ``us=`` (microseconds, Apache ``%D``). Endpoints are grouped by method
and path with the query string dropped and ids collapsed (``/orders/4821`` ->
``/orders/{id}``). Percentiles use the nearest-rank method.

Standard library only; runs on Python 3.8+.
"""

import math
import re
import sys
from pathlib import Path

EXIT_USAGE = 2
MAX_BAD_FRACTION = 0.5
_LINE = re.compile(
    r'^(?P<client>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<method>[A-Z]+) (?P<target>\S+)(?: HTTP/[\d.]+)?" '
    r"(?P<status>\d{3}) (?P<bytes>\d+|-)(?P<rest>.*)$"
)
_TIMING_KEY = re.compile(r"\b(rt|request_time|us)=(\d+(?:\.\d+)?)")
_TRAILING_SECONDS = re.compile(r"\s(\d+\.\d+)\s*$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_HEX = re.compile(r"^[0-9a-fA-F]{12,}$")


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def normalise_path(target):
    """Drop the query string and collapse numeric, UUID and long hex segments."""
    path = target.split("?", 1)[0].split("#", 1)[0] or "/"
    parts = []
    for seg in path.split("/"):
        if seg.isdigit():
            parts.append("{id}")
        elif _UUID.match(seg):
            parts.append("{uuid}")
        elif _HEX.match(seg) and any(c.isdigit() for c in seg):
            parts.append("{hash}")
        else:
            parts.append(seg)
    return "/".join(parts)


def parse_line(line):
    """Return (endpoint, milliseconds, status) or None when the line is not a timed access line."""
    m = _LINE.match(line.strip())
    if not m:
        return None
    rest = m.group("rest")
    keyed = _TIMING_KEY.search(rest)
    if keyed:
        value = float(keyed.group(2))
        ms = value / 1000.0 if keyed.group(1) == "us" else value * 1000.0
    else:
        bare = _TRAILING_SECONDS.search(rest)
        if not bare:
            return None
        ms = float(bare.group(1)) * 1000.0
    endpoint = "%s %s" % (m.group("method"), normalise_path(m.group("target")))
    return endpoint, ms, int(m.group("status"))


def nearest_rank(sorted_values, pct):
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def summarise(path):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found" % path)
    try:
        lines = p.read_text(encoding="utf-8", errors="strict").splitlines()
    except UnicodeDecodeError:
        raise InputError("%s: not a UTF-8 text file (expected an access log)" % path) from None
    timings, errors, bad = {}, {}, 0
    for line in lines:
        if not line.strip():
            continue
        parsed = parse_line(line)
        if parsed is None:
            bad += 1
            continue
        endpoint, ms, status = parsed
        timings.setdefault(endpoint, []).append(ms)
        errors[endpoint] = errors.get(endpoint, 0) + (status >= 500)
    parsed_count = sum(len(v) for v in timings.values())
    if parsed_count == 0:
        raise InputError(
            "%s: no access-log lines with a request time found; expected combined format "
            'ending in the request time, e.g. ... "GET /api/x HTTP/1.1" 200 512 "-" "curl/8" 0.134' % path
        )
    if bad > MAX_BAD_FRACTION * (bad + parsed_count):
        raise InputError(
            "%s: %d of %d lines are not timed access-log lines; is this the right file?"
            % (path, bad, bad + parsed_count)
        )
    rows = []
    for endpoint, values in timings.items():
        values.sort()
        rows.append(
            {
                "endpoint": endpoint,
                "count": len(values),
                "p50": nearest_rank(values, 50),
                "p95": nearest_rank(values, 95),
                "p99": nearest_rank(values, 99),
                "max": values[-1],
                "errors": errors[endpoint],
            }
        )
    rows.sort(key=lambda r: (-r["p95"], r["endpoint"]))
    return rows, parsed_count, bad


def report(rows, parsed_count, bad, top):
    width = max(len("endpoint"), *(len(r["endpoint"]) for r in rows[:top]))
    out = [
        "Requests parsed: %d (skipped %d unparseable lines)" % (parsed_count, bad),
        "%-*s %6s %8s %8s %8s %8s %5s" % (width, "endpoint", "count", "p50_ms", "p95_ms", "p99_ms", "max_ms", "5xx"),
    ]
    for r in rows[:top]:
        out.append(
            "%-*s %6d %8.0f %8.0f %8.0f %8.0f %5d"
            % (width, r["endpoint"], r["count"], r["p50"], r["p95"], r["p99"], r["max"], r["errors"])
        )
    if len(rows) > top:
        out.append("(%d more endpoints not shown; use --top)" % (len(rows) - top))
    worst = rows[0]
    out.append("Slowest endpoint by p95: %s (p95 %.0f ms, p99 %.0f ms, %d requests)"
               % (worst["endpoint"], worst["p95"], worst["p99"], worst["count"]))
    return "\n".join(out)


def main(argv):
    args = argv[1:]
    top = 20
    if "--top" in args:
        i = args.index("--top")
        try:
            top = int(args[i + 1])
            if top < 1:
                raise ValueError
        except (IndexError, ValueError):
            print("error: --top needs a positive whole number", file=sys.stderr)
            return EXIT_USAGE
        del args[i : i + 2]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print("usage: latency.py ACCESS.log [--top N]", file=sys.stderr)
        return EXIT_USAGE
    try:
        rows, parsed_count, bad = summarise(args[0])
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    print(report(rows, parsed_count, bad, top))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
