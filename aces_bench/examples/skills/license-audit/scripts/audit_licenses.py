#!/usr/bin/env python3
"""Audit dependency licences against an allow/review/deny policy.

Usage: python3 scripts/audit_licenses.py PACKAGES POLICY.json

PACKAGES is one of:
  * pip-licenses JSON:      [{"Name": ..., "Version": ..., "License": ...}, ...]
  * license-checker JSON:   {"name@1.2.3": {"licenses": "MIT", ...}, ...}
  * CSV with a header:      name,version,license
POLICY.json: {"allow": [...], "review": [...], "deny": [...],
              "exceptions": {"package": "reason"}}   (review/exceptions optional)

A package fails the audit when its licence is denied or cannot be identified;
licences on the review list need a human decision but do not fail the audit.

Standard library only; runs on Python 3.8+.
"""

import csv
import json
import sys
from pathlib import Path

# A sibling module: running this file puts scripts/ first on sys.path.
from licenses import canonical, evaluate

EXIT_USAGE = 2
POLICY_KEYS = {"allow", "review", "deny", "exceptions", "description"}


class InputError(Exception):
    """A problem with the user's input, reported without a traceback."""


def read_text(path, what):
    p = Path(path)
    if not p.is_file():
        raise InputError("%s: file not found (%s)" % (path, what))
    try:
        return p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("%s: not a UTF-8 text file (%s)" % (path, what)) from None


def _field(record, *names):
    lowered = {str(k).strip().lower(): v for k, v in record.items()}
    for n in names:
        if n in lowered and lowered[n] not in (None, ""):
            value = lowered[n]
            return " OR ".join(value) if isinstance(value, list) else str(value)
    return ""


def load_packages(path):
    """Return [(name, version, raw licence)] from pip-licenses JSON, license-checker JSON or CSV."""
    text = read_text(path, "expected a package list as JSON or CSV")
    stripped = text.lstrip()
    packages = []
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError("%s: invalid JSON at line %d: %s" % (path, exc.lineno, exc.msg)) from None
        if isinstance(data, dict):
            for key, info in data.items():
                name, _, version = key.rpartition("@") if "@" in key[1:] else (key, "", "")
                if not isinstance(info, dict):
                    raise InputError("%s: entry %r should be an object with a 'licenses' field" % (path, key))
                packages.append((name, version, _field(info, "licenses", "license")))
        elif isinstance(data, list):
            for i, rec in enumerate(data):
                if not isinstance(rec, dict) or not _field(rec, "name"):
                    raise InputError("%s: item %d has no 'Name' field (pip-licenses --format=json)" % (path, i))
                packages.append((_field(rec, "name"), _field(rec, "version"), _field(rec, "license", "licenses")))
    else:
        reader = csv.DictReader(text.splitlines())
        header = [h.strip().lower() for h in (reader.fieldnames or [])]
        if "name" not in header or not ({"license", "licenses"} & set(header)):
            raise InputError(
                "%s: CSV needs 'name' and 'license' columns (found: %s)" % (path, ", ".join(header) or "none")
            )
        for row in reader:
            packages.append((_field(row, "name"), _field(row, "version"), _field(row, "license", "licenses")))
    if not packages:
        raise InputError("%s: no packages listed" % path)
    return packages


def load_policy(path):
    text = read_text(path, "expected a JSON policy")
    try:
        policy = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError("%s: invalid JSON at line %d: %s" % (path, exc.lineno, exc.msg)) from None
    if not isinstance(policy, dict) or "allow" not in policy:
        raise InputError('%s: policy must be an object with at least an "allow" list' % path)
    unknown = sorted(set(policy) - POLICY_KEYS)
    if unknown:
        raise InputError("%s: unknown policy key(s) %s; valid keys: %s" % (path, unknown, sorted(POLICY_KEYS)))
    lists = {}
    for key in ("allow", "review", "deny"):
        value = policy.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError('%s: "%s" must be a list of licence names' % (path, key))
        lists[key] = {canonical(v) for v in value}
    exceptions = policy.get("exceptions", {})
    if not isinstance(exceptions, dict):
        raise InputError('%s: "exceptions" must map package names to a reason' % path)
    return lists, {k.lower(): str(v) for k, v in exceptions.items()}


def audit(packages, lists, exceptions):
    def status_of(lic):
        if lic is None:
            return "unknown"
        if lic in lists["deny"]:
            return "denied"
        if lic in lists["allow"]:
            return "allowed"
        if lic in lists["review"]:
            return "review"
        return "unknown"

    results = []
    for name, version, raw in packages:
        if name.lower() in exceptions:
            results.append((name, version, raw, "excepted", exceptions[name.lower()]))
            continue
        status, decided_by = evaluate(raw, status_of)
        results.append((name, version, raw, status, decided_by))
    return results


def report(results):
    groups = {}
    for r in results:
        groups.setdefault(r[3], []).append(r)
    count = lambda s: len(groups.get(s, []))
    out = [
        "Packages audited: %d" % len(results),
        "Allowed: %d  Excepted: %d  Needs review: %d  Unknown: %d  Denied: %d"
        % (count("allowed"), count("excepted"), count("review"), count("unknown"), count("denied")),
    ]
    titles = [("denied", "Denied"), ("unknown", "Unknown or unlisted licence"), ("review", "Needs legal review"),
              ("excepted", "Excepted by policy")]
    for status, title in titles:
        rows = groups.get(status, [])
        if not rows:
            continue
        out.append("%s (%d):" % (title, len(rows)))
        for name, version, raw, _, why in sorted(rows, key=lambda r: r[0].lower()):
            detail = "reason: %s" % why if status == "excepted" else "%s (declared: %s)" % (why, raw or "nothing")
            out.append("  %s %s  %s" % (name, version or "?", detail))
    violations = count("denied") + count("unknown")
    if violations:
        out.append("Verdict: FAIL (%d violations: %d denied, %d unknown)" % (violations, count("denied"), count("unknown")))
    else:
        out.append("Verdict: PASS (%d need review)" % count("review"))
    return "\n".join(out)


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print("usage: audit_licenses.py PACKAGES(.json|.csv) POLICY.json", file=sys.stderr)
        return EXIT_USAGE
    try:
        packages = load_packages(argv[1])
        lists, exceptions = load_policy(argv[2])
    except InputError as exc:
        print("error: %s" % exc, file=sys.stderr)
        return EXIT_USAGE
    print(report(audit(packages, lists, exceptions)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
