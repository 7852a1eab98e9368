#!/usr/bin/env python3
"""Diagnose a failing HTTP API call from a captured request/response pair.

Usage: python3 scripts/diagnose.py EXCHANGE.http

EXCHANGE.http holds the raw request (request line, headers, blank line, body) followed
by the raw response, which starts at the first line beginning with ``HTTP/``:

    POST /v1/orders HTTP/1.1
    Host: api.example.com
    Content-Type: text/plain

    {"sku": "A-1"}
    HTTP/1.1 415 Unsupported Media Type
    Content-Type: application/json

    {"error": "unsupported content type"}

Standard library only; runs on Python 3.8+.
"""

import json
import re
import sys
from pathlib import Path

EXIT_USAGE = 2
_REQUEST_LINE = re.compile(r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(\S+)(?:\s+HTTP/[\d.]+)?$")
_STATUS_LINE = re.compile(r"^HTTP/[\d.]+\s+(\d{3})\s*(.*)$")
BODY_METHODS = ("POST", "PUT", "PATCH")


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def parse_message(lines):
    """Split header lines from the body; header names are lower-cased."""
    headers, i = {}, 0
    while i < len(lines) and lines[i].strip():
        name, sep, value = lines[i].partition(":")
        if not sep:
            raise InputError("header line %r has no ':'" % lines[i][:60])
        headers[name.strip().lower()] = value.strip()
        i += 1
    return headers, "\n".join(lines[i + 1 :]).strip()


def parse_exchange(path):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found" % path)
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise InputError("%s: not a UTF-8 text file (expected a raw HTTP exchange)" % path) from None
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines or not _REQUEST_LINE.match(lines[0].strip()):
        raise InputError("%s: first line must be a request line such as 'POST /v1/orders HTTP/1.1'" % path)
    split = next((i for i, l in enumerate(lines) if _STATUS_LINE.match(l.strip())), None)
    if split is None:
        raise InputError("%s: no response found (a line starting 'HTTP/1.1 <status>' must follow the request)" % path)
    method, target = _REQUEST_LINE.match(lines[0].strip()).groups()
    try:
        req_headers, req_body = parse_message(lines[1:split])
        status_m = _STATUS_LINE.match(lines[split].strip())
        resp_headers, resp_body = parse_message(lines[split + 1 :])
    except InputError as exc:
        raise InputError("%s: %s" % (path, exc)) from None
    request = {"method": method, "target": target, "headers": req_headers, "body": req_body}
    response = {"status": int(status_m.group(1)), "reason": status_m.group(2), "headers": resp_headers, "body": resp_body}
    return request, response


def _json_problem(body):
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        return "line %d column %d: %s" % (exc.lineno, exc.colno, exc.msg)
    return None


def findings(req, resp):
    """Ordered (severity, message) findings; the first 'cause' is the likely root cause."""
    out = []
    status, rh, qh = resp["status"], resp["headers"], req["headers"]
    ctype = qh.get("content-type", "")
    body = req["body"]
    if req["method"] in BODY_METHODS and body:
        looks_json = body.lstrip()[:1] in ("{", "[")
        if looks_json and "json" not in ctype:
            out.append(("cause", "request body is JSON but Content-Type is %r; send 'application/json'" % (ctype or "missing")))
        if "json" in ctype:
            problem = _json_problem(body)
            if problem:
                out.append(("cause", "request body is not valid JSON (%s)" % problem))
        declared = qh.get("content-length")
        if declared and declared.isdigit() and int(declared) != len(body.encode("utf-8")):
            out.append(("warn", "Content-Length %s but body is %d bytes" % (declared, len(body.encode("utf-8")))))
    if status == 401:
        auth = qh.get("authorization")
        challenge = rh.get("www-authenticate", "")
        if not auth:
            out.append(("cause", "no Authorization header was sent"))
        elif "invalid_token" in challenge or "expired" in challenge.lower():
            out.append(("cause", "the token was rejected: %s" % challenge))
        elif auth.split(" ", 1)[0].lower() not in ("bearer", "basic"):
            out.append(("cause", "Authorization scheme %r is not Bearer or Basic" % auth.split(" ", 1)[0]))
        else:
            out.append(("cause", "credentials sent but rejected; check the key belongs to this environment"))
    if status == 403:
        out.append(("cause", "authenticated but not permitted: check the token's scopes or roles"))
    if status == 405:
        allow = rh.get("allow")
        out.append(("cause", "method %s not allowed%s" % (req["method"], "; server allows " + allow if allow else "")))
    if status == 404:
        out.append(("cause", "no resource at %s: check the path, API version prefix and ids" % req["target"]))
    if status == 429:
        retry = rh.get("retry-after")
        out.append(("cause", "rate limited%s" % ("; retry after %s s" % retry if retry else "; back off and retry")))
    if status in (301, 302, 307, 308):
        loc = rh.get("location", "?")
        note = " (301/302 turn POST into GET: the body is dropped)" if status in (301, 302) and req["method"] == "POST" else ""
        out.append(("cause", "redirected to %s%s; call that URL directly" % (loc, note)))
    if status >= 500:
        rid = rh.get("x-request-id") or rh.get("request-id")
        out.append(("cause", "server-side failure%s; retry with backoff and report it" % (" (request id %s)" % rid if rid else "")))
    origin = qh.get("origin")
    if origin and "access-control-allow-origin" not in rh:
        out.append(("warn", "browser request from %s but no Access-Control-Allow-Origin in the response (CORS)" % origin))
    if status == 415 and not any(s == "cause" for s, _ in out):
        out.append(("cause", "server rejects Content-Type %r" % (ctype or "missing")))
    if status == 400 and not any(s == "cause" for s, _ in out):
        out.append(("cause", "server rejected the payload: %s" % (resp["body"][:160] or "no detail in the body")))
    return out


def report(req, resp, found):
    out = [
        "Request: %s %s" % (req["method"], req["target"]),
        "Status: %d %s" % (resp["status"], resp["reason"]),
    ]
    if not found:
        out.append("No problems found: the call %s." % ("succeeded" if resp["status"] < 400 else "failed without a known pattern"))
        return "\n".join(out)
    out.append("Findings:")
    out += ["  %d. [%s] %s" % (i, sev, msg) for i, (sev, msg) in enumerate(found, 1)]
    cause = next((m for s, m in found if s == "cause"), found[0][1])
    out.append("Likely cause: %s" % cause)
    return "\n".join(out)


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("usage: diagnose.py EXCHANGE.http", file=sys.stderr)
        return EXIT_USAGE
    try:
        req, resp = parse_exchange(argv[1])
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    print(report(req, resp, findings(req, resp)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
