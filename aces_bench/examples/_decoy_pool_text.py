"""Decoy-pool skills, part 1: text, numbers and small data formats.

Each entry is a small but working utility (standard library only) with a sample
input; ``_decoy_pool_gen`` renders them as skill folders. None of them does what the
four example targets do (invoice reconciliation, access-log latency percentiles,
semver bumps, license audits).
"""

from __future__ import annotations

from aces_bench.examples._decoy_pool_model import PoolSkill

TEXT_SKILLS: list[PoolSkill] = [
    PoolSkill(
        name="csv-dedupe",
        description="Remove duplicate rows from a CSV file, keeping the first occurrence, optionally matching on one key column.",
        tags=["csv", "cleanup", "deduplication"],
        when=["A CSV export has repeated rows", "Keep one row per customer id or email"],
        script="dedupe.py",
        args="<input.csv> [--key COLUMN]",
        limits="Reads the whole file into memory; compares values exactly (no case folding).",
        code='''
import argparse, csv, sys

def main():
    ap = argparse.ArgumentParser(description="Drop duplicate CSV rows.")
    ap.add_argument("path")
    ap.add_argument("--key", help="column that identifies a row (default: the whole row)")
    a = ap.parse_args()
    with open(a.path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields = reader.fieldnames or []
        if a.key and a.key not in fields:
            sys.exit(f"error: no column {a.key!r}; columns: {', '.join(fields)}")
        seen, kept, dropped = set(), [], 0
        for row in reader:
            k = row[a.key] if a.key else tuple(row.values())
            if k in seen:
                dropped += 1
                continue
            seen.add(k)
            kept.append(row)
    out = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\\n")
    out.writeheader()
    out.writerows(kept)
    print(f"# kept {len(kept)} rows, dropped {dropped} duplicates", file=sys.stderr)

main()
''',
        samples={"people.csv": "id,name,email\n1,Ada,ada@example.org\n2,Bob,bob@example.org\n1,Ada,ada@example.org\n3,Cy,bob@example.org\n"},
    ),
    PoolSkill(
        name="json-flatten",
        description="Flatten nested JSON documents into dotted key paths with their scalar values, one per line.",
        tags=["json", "flatten", "inspection"],
        when=["Inspect a deeply nested JSON response", "Turn nested JSON into key=value pairs for grep"],
        script="flatten.py",
        args="<input.json>",
        limits="Keys containing dots are not escaped.",
        code='''
import json, sys

def walk(value, prefix, out):
    if isinstance(value, dict):
        for k in sorted(value):
            walk(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            walk(v, f"{prefix}[{i}]", out)
    else:
        out.append((prefix or "$", json.dumps(value)))

if len(sys.argv) != 2:
    sys.exit("usage: flatten.py <input.json>")
with open(sys.argv[1], encoding="utf-8") as fh:
    data = json.load(fh)
pairs = []
walk(data, "", pairs)
for key, value in pairs:
    print(f"{key} = {value}")
''',
        samples={"order.json": '{"id": 7, "customer": {"name": "Ada", "tags": ["vip", "eu"]}, "paid": true}\n'},
    ),
    PoolSkill(
        name="word-frequency",
        description="Count the most frequent words in a text document, ignoring case, punctuation and common English stop words.",
        tags=["text", "nlp", "frequency"],
        when=["Which words dominate a document", "Quick keyword overview of an essay or transcript"],
        script="wordfreq.py",
        args="<text.txt> [--top N]",
        limits="English stop-word list only; no stemming.",
        code='''
import argparse, collections, re

STOP = set("a an and are as at be by for from has have i in is it its of on or that the this to was were will with".split())
ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--top", type=int, default=10)
a = ap.parse_args()
with open(a.path, encoding="utf-8") as fh:
    words = [w for w in re.findall(r"[a-z']+", fh.read().lower()) if w not in STOP and len(w) > 1]
for word, n in collections.Counter(words).most_common(a.top):
    print(f"{n:6d}  {word}")
''',
        samples={"speech.txt": "The river runs to the sea. The sea is wide, and the river is long.\nRivers feed the sea; the sea feeds the clouds.\n"},
    ),
    PoolSkill(
        name="markdown-toc",
        description="Generate a nested table of contents with GitHub-style anchor links from the headings of a Markdown file.",
        tags=["markdown", "docs", "toc"],
        when=["Add a table of contents to a README", "List the section structure of a long document"],
        script="toc.py",
        args="<doc.md>",
        limits="Ignores setext (underlined) headings; headings inside fenced code are skipped.",
        code='''
import re, sys

def anchor(title, used):
    slug = re.sub(r"[^\\w\\- ]", "", title.lower()).strip().replace(" ", "-")
    n = used.get(slug, 0)
    used[slug] = n + 1
    return slug if n == 0 else f"{slug}-{n}"

if len(sys.argv) != 2:
    sys.exit("usage: toc.py <doc.md>")
used, fenced = {}, False
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("```"):
        fenced = not fenced
        continue
    m = None if fenced else re.match(r"^(#{1,6})\\s+(.*?)\\s*#*\\s*$", line)
    if m:
        level, title = len(m.group(1)), m.group(2)
        print(f"{'  ' * (level - 1)}- [{title}](#{anchor(title, used)})")
''',
        samples={"guide.md": "# Guide\n\n## Install\n\n```\n# not a heading\n```\n\n## Use it\n\n### Options\n\n## Install\n"},
    ),
    PoolSkill(
        name="unit-converter",
        description="Convert quantities between metric and imperial units of length, mass, volume and temperature, one conversion per line.",
        tags=["units", "conversion", "measurement"],
        when=["Convert 5 miles to kilometres", "Batch-convert recipe or engineering quantities"],
        script="convert.py",
        args="<conversions.txt>",
        limits="Lines read 'VALUE FROM TO' (e.g. '5 mi km'); compound units are not supported.",
        code='''
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
''',
        samples={"conversions.txt": "5 mi km\n100 f c\n2 lb kg\n1 gal l\n3 kg m\n"},
    ),
    PoolSkill(
        name="timezone-shift",
        description="Shift ISO-8601 timestamps with UTC offsets to another fixed offset, for scheduling across time zones.",
        tags=["time", "timezone", "scheduling"],
        when=["Convert meeting times to another office's offset", "Normalise timestamps to UTC"],
        script="tzshift.py",
        args="<times.txt> [--to +00:00]",
        limits="Fixed offsets only: no daylight-saving rules or zone names.",
        code='''
import argparse, datetime, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--to", default="+00:00", help="target offset such as +05:30")
a = ap.parse_args()
m = re.fullmatch(r"([+-])(\\d{2}):(\\d{2})", a.to)
if not m:
    raise SystemExit(f"error: --to must look like +05:30, got {a.to!r}")
sign = 1 if m.group(1) == "+" else -1
target = datetime.timezone(sign * datetime.timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
for line in open(a.path, encoding="utf-8"):
    text = line.strip()
    if not text:
        continue
    try:
        ts = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        print(f"{text} -> not an ISO timestamp")
        continue
    if ts.tzinfo is None:
        print(f"{text} -> no offset given; add one such as +02:00")
        continue
    print(f"{text} -> {ts.astimezone(target).isoformat()}")
''',
        samples={"meetings.txt": "2024-03-10T09:00:00+01:00\n2024-03-10T17:30:00-05:00\n2024-03-11T00:15:00Z\n2024-03-12 10:00\n"},
    ),
    PoolSkill(
        name="cron-explain",
        description="Explain crontab schedule lines in plain English, field by field, and flag out-of-range values.",
        tags=["cron", "scheduling", "ops"],
        when=["What does '*/15 2 * * 1-5' mean", "Review a crontab before deploying it"],
        script="cronexplain.py",
        args="<crontab>",
        limits="Five-field syntax only; '@daily'-style macros are expanded, seconds fields are not supported.",
        code='''
import sys

FIELDS = [("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7)]
MACROS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *"}

def describe(expr, name, lo, hi):
    if expr == "*":
        return f"every {name}"
    parts = []
    for item in expr.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            rng = f"every {step} {name}s" if step else f"every {name}"
        else:
            a, _, b = base.partition("-")
            for v in (a, b):
                if v and not (v.isdigit() and lo <= int(v) <= hi):
                    raise ValueError(f"{name} value {v!r} is outside {lo}-{hi}")
            rng = f"{name} {a}-{b}" if b else f"{name} {a}"
            if step:
                rng += f" every {step}"
        parts.append(rng)
    return ", ".join(parts)

if len(sys.argv) != 2:
    sys.exit("usage: cronexplain.py <crontab>")
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    first, _, rest = line.partition(" ")
    if first in MACROS:
        line = MACROS[first] + " " + rest
    tokens = line.split(None, 5)
    if len(tokens) < 6:
        print(f"{line}\\n  -> needs five schedule fields and a command")
        continue
    try:
        text = "; ".join(describe(t, *f) for t, f in zip(tokens[:5], FIELDS))
    except ValueError as exc:
        text = f"INVALID: {exc}"
    print(f"{' '.join(tokens[:5])}  {tokens[5]}\\n  -> {text}")
''',
        samples={"crontab": "# nightly jobs\n*/15 2 * * 1-5 /usr/local/bin/sync\n@daily /usr/bin/backup\n0 25 * * * /bin/broken\n"},
    ),
    PoolSkill(
        name="ini-to-json",
        description="Convert an INI configuration file into JSON, with sections as objects and numbers and booleans typed.",
        tags=["ini", "json", "conversion"],
        when=["Feed an INI file to a tool that reads JSON", "Inspect INI settings as structured data"],
        script="ini2json.py",
        args="<config.ini>",
        limits="Interpolation is off; duplicate keys are an error (configparser's strict mode).",
        code='''
import configparser, json, sys

def typed(v):
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v

if len(sys.argv) != 2:
    sys.exit("usage: ini2json.py <config.ini>")
cp = configparser.ConfigParser(interpolation=None)
cp.read(sys.argv[1], encoding="utf-8")
data = {s: {k: typed(v) for k, v in cp.items(s, raw=True)} for s in cp.sections()}
print(json.dumps(data, indent=2, sort_keys=True))
''',
        samples={"app.ini": "[server]\nhost = 0.0.0.0\nport = 8080\ndebug = off\n\n[cache]\nttl = 2.5\nbackend = redis\n"},
    ),
    PoolSkill(
        name="password-strength",
        description="Score candidate passwords by estimated entropy and flag weak patterns such as dictionary words, repeats and sequences.",
        tags=["security", "passwords", "entropy"],
        when=["Check whether proposed passwords are strong enough", "Explain why a password is weak"],
        script="pwstrength.py",
        args="<passwords.txt>",
        limits="A heuristic estimate, not a cracking-time guarantee; small built-in word list.",
        code='''
import math, re, sys

COMMON = {"password", "letmein", "qwerty", "admin", "welcome", "dragon", "monkey", "summer", "winter"}

def score(pw):
    pool = sum(n for pat, n in ((r"[a-z]", 26), (r"[A-Z]", 26), (r"[0-9]", 10), (r"[^a-zA-Z0-9]", 33)) if re.search(pat, pw))
    bits = len(pw) * math.log2(pool) if pool else 0.0
    issues = []
    if any(w in pw.lower() for w in COMMON):
        issues.append("contains a common word"); bits /= 2
    if re.search(r"(.)\\1\\1", pw):
        issues.append("repeats a character 3+ times"); bits -= 10
    if re.search(r"(012|123|234|345|456|567|678|789|abc|bcd|cde)", pw.lower()):
        issues.append("contains a sequence"); bits -= 10
    if len(pw) < 12:
        issues.append("shorter than 12 characters")
    return max(bits, 0.0), issues

if len(sys.argv) != 2:
    sys.exit("usage: pwstrength.py <passwords.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    pw = line.rstrip("\\n")
    if not pw:
        continue
    bits, issues = score(pw)
    verdict = "strong" if bits >= 60 and not issues else "fair" if bits >= 40 else "weak"
    print(f"{pw!r}: {bits:.0f} bits, {verdict}" + (f" ({'; '.join(issues)})" if issues else ""))
''',
        samples={"candidates.txt": "password123\nTr0ub4dor&3\ncorrect-horse-battery-staple-42\naaaa1111\n"},
    ),
    PoolSkill(
        name="url-parser",
        description="Break URLs into scheme, host, port, path, query parameters and fragment, decoding percent-escapes.",
        tags=["url", "parsing", "web"],
        when=["Which query parameters does this link carry", "Compare the parts of many URLs"],
        script="urlparts.py",
        args="<urls.txt>",
        limits="Does not resolve relative URLs or follow redirects (no network).",
        code='''
import sys
from urllib.parse import parse_qsl, urlsplit

if len(sys.argv) != 2:
    sys.exit("usage: urlparts.py <urls.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    url = line.strip()
    if not url:
        continue
    p = urlsplit(url)
    print(url)
    print(f"  scheme={p.scheme or '-'} host={p.hostname or '-'} port={p.port or 'default'} path={p.path or '/'}")
    for k, v in parse_qsl(p.query, keep_blank_values=True):
        print(f"  query {k} = {v}")
    if p.fragment:
        print(f"  fragment = {p.fragment}")
''',
        samples={"links.txt": "https://shop.example.com:8443/cart?item=42&coupon=SPRING%2024#summary\nhttp://example.org/search?q=a+b&page=\n"},
    ),
    PoolSkill(
        name="roman-numerals",
        description="Convert between Roman numerals and Arabic integers in either direction, validating canonical numeral form.",
        tags=["numbers", "conversion", "roman"],
        when=["What year is MCMXCIV", "Write 2024 in Roman numerals"],
        script="roman.py",
        args="<numbers.txt>",
        limits="Range 1 to 3999 (standard notation).",
        code='''
import sys

VALS = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]

def to_roman(n):
    out = ""
    for v, s in VALS:
        while n >= v:
            out += s; n -= v
    return out

def from_roman(s):
    total, i = 0, 0
    for v, sym in VALS:
        while s.startswith(sym, i):
            total += v; i += len(sym)
    if i != len(s) or to_roman(total) != s:
        raise ValueError("not a canonical Roman numeral")
    return total

if len(sys.argv) != 2:
    sys.exit("usage: roman.py <numbers.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    t = line.strip().upper()
    if not t:
        continue
    try:
        if t.isdigit():
            n = int(t)
            if not 1 <= n <= 3999:
                raise ValueError("out of range 1-3999")
            print(f"{t} = {to_roman(n)}")
        else:
            print(f"{t} = {from_roman(t)}")
    except ValueError as exc:
        print(f"{t}: {exc}")
''',
        samples={"numbers.txt": "MCMXCIV\n2024\nIIII\n4000\nXLII\n"},
    ),
    PoolSkill(
        name="date-diff",
        description="Count calendar days and Monday-to-Friday business days between pairs of dates.",
        tags=["dates", "calendar", "business-days"],
        when=["How many working days until the deadline", "Days between two dates"],
        script="datediff.py",
        args="<pairs.txt>",
        limits="No public-holiday calendar; the end date is exclusive.",
        code='''
import datetime, sys

if len(sys.argv) != 2:
    sys.exit("usage: datediff.py <pairs.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.split()
    if len(parts) != 2:
        continue
    try:
        a, b = (datetime.date.fromisoformat(p) for p in parts)
    except ValueError:
        print(f"{line.strip()}: dates must be YYYY-MM-DD")
        continue
    lo, hi = min(a, b), max(a, b)
    days = (hi - lo).days
    full, rest = divmod(days, 7)
    business = full * 5 + sum(1 for i in range(rest) if (lo + datetime.timedelta(days=full * 7 + i)).weekday() < 5)
    print(f"{a} -> {b}: {days} days, {business} business days")
''',
        samples={"pairs.txt": "2024-01-01 2024-03-01\n2024-05-03 2024-05-13\n2024-02-30 2024-03-01\n"},
    ),
    PoolSkill(
        name="loan-amortization",
        description="Build a fixed-rate loan amortization schedule: monthly payment, interest and principal split, and remaining balance.",
        tags=["finance", "loan", "mortgage"],
        when=["What is the monthly payment on a mortgage", "How much interest does a loan cost in total"],
        script="amortize.py",
        args="<loan.json>",
        limits="Fixed rate, monthly payments, no extra payments or fees.",
        code='''
import json, sys

if len(sys.argv) != 2:
    sys.exit("usage: amortize.py <loan.json>  (keys: principal, annual_rate_percent, years)")
loan = json.load(open(sys.argv[1], encoding="utf-8"))
p, years = float(loan["principal"]), int(loan["years"])
r, n = float(loan["annual_rate_percent"]) / 100 / 12, years * 12
pay = p / n if r == 0 else p * r / (1 - (1 + r) ** -n)
balance, total_interest = p, 0.0
print(f"monthly payment: {pay:.2f}")
for month in range(1, n + 1):
    interest = balance * r
    balance -= pay - interest
    total_interest += interest
    if month % 12 == 0:
        print(f"year {month // 12:2d}: balance {max(balance, 0):12.2f}")
print(f"total interest: {total_interest:.2f}")
''',
        samples={"loan.json": '{"principal": 250000, "annual_rate_percent": 4.5, "years": 5}\n'},
    ),
    PoolSkill(
        name="compound-interest",
        description="Project savings growth with compound interest and regular monthly contributions, year by year.",
        tags=["finance", "savings", "interest"],
        when=["How much will my savings be worth in 10 years", "Compare contribution plans"],
        script="compound.py",
        args="<plan.json>",
        limits="Constant rate; contributions at month end; no taxes or inflation.",
        code='''
import json, sys

if len(sys.argv) != 2:
    sys.exit("usage: compound.py <plan.json>  (keys: initial, monthly, annual_rate_percent, years)")
plan = json.load(open(sys.argv[1], encoding="utf-8"))
balance, monthly = float(plan["initial"]), float(plan.get("monthly", 0))
r = float(plan["annual_rate_percent"]) / 100 / 12
contributed = balance
for year in range(1, int(plan["years"]) + 1):
    for _ in range(12):
        balance = balance * (1 + r) + monthly
        contributed += monthly
    print(f"year {year:2d}: {balance:12.2f} (contributed {contributed:.2f}, growth {balance - contributed:.2f})")
''',
        samples={"plan.json": '{"initial": 1000, "monthly": 200, "annual_rate_percent": 5, "years": 3}\n'},
    ),
    PoolSkill(
        name="recipe-scaler",
        description="Scale the ingredient quantities of a recipe to a different number of servings, keeping units and fractions readable.",
        tags=["cooking", "recipes", "scaling"],
        when=["Double a recipe", "Cook for 3 people from a recipe for 8"],
        script="scale.py",
        args="<recipe.txt> [--servings N]",
        limits="The recipe's first line must read 'serves N'; quantities are numbers or simple fractions.",
        code='''
import argparse, fractions, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--servings", type=int, default=2)
a = ap.parse_args()
lines = open(a.path, encoding="utf-8").read().splitlines()
m = re.match(r"serves\\s+(\\d+)", lines[0].strip().lower()) if lines else None
if not m:
    raise SystemExit("error: the first line must be 'serves N'")
factor = fractions.Fraction(a.servings, int(m.group(1)))
print(f"serves {a.servings}")
for line in lines[1:]:
    q = re.match(r"\\s*(\\d+(?:\\.\\d+)?(?:/\\d+)?)\\s+(.*)", line)
    if not q:
        print(line)
        continue
    amount = fractions.Fraction(q.group(1)) * factor
    amount = amount.limit_denominator(8)
    whole, frac = divmod(amount, 1)
    shown = " ".join(p for p in (str(whole) if whole else "", str(frac) if frac else "") if p) or "0"
    print(f"{shown} {q.group(2)}")
''',
        samples={"pancakes.txt": "serves 4\n2 cups flour\n1/2 tsp salt\n3 eggs\n1.5 cups milk\nbutter for the pan\n"},
    ),
    PoolSkill(
        name="csv-to-markdown",
        description="Render a CSV file as an aligned Markdown table, right-aligning numeric columns.",
        tags=["csv", "markdown", "docs"],
        when=["Paste a CSV into a README or pull request", "Pretty-print a small CSV"],
        script="csv2md.py",
        args="<table.csv>",
        limits="Pipes inside cells are escaped; very wide tables are not wrapped.",
        code='''
import csv, sys

def numeric(v):
    try:
        float(v.replace(",", ""))
        return True
    except ValueError:
        return False

if len(sys.argv) != 2:
    sys.exit("usage: csv2md.py <table.csv>")
rows = [[c.replace("|", "\\\\|") for c in r] for r in csv.reader(open(sys.argv[1], newline="", encoding="utf-8"))]
if not rows:
    sys.exit("error: empty CSV")
head, body = rows[0], rows[1:]
widths = [max(len(r[i]) if i < len(r) else 0 for r in rows) for i in range(len(head))]
nums = [bool(body) and all(numeric(r[i]) for r in body if i < len(r)) for i in range(len(head))]
cell = lambda v, i: v.rjust(widths[i]) if nums[i] else v.ljust(widths[i])
print("| " + " | ".join(cell(h, i) for i, h in enumerate(head)) + " |")
print("|" + "|".join(("-" * (w + 1) + ":") if nums[i] else ("-" * (w + 2)) for i, w in enumerate(widths)) + "|")
for r in body:
    print("| " + " | ".join(cell(r[i] if i < len(r) else "", i) for i in range(len(head))) + " |")
''',
        samples={"planets.csv": "planet,moons,type\nEarth,1,rocky\nJupiter,95,gas giant\nMars,2,rocky\n"},
    ),
    PoolSkill(
        name="gitignore-check",
        description="Check which paths a .gitignore file would ignore, reporting the pattern that matched each path.",
        tags=["git", "gitignore", "repository"],
        when=["Why is this file not showing in git status", "Test new .gitignore rules before committing"],
        script="ignorecheck.py",
        args="<.gitignore> <paths.txt>",
        limits="Implements the common rules (globs, '**', trailing '/', '!' negation, anchoring); not every git edge case.",
        code='''
import fnmatch, sys

def rules(path):
    out = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\\n")
        if not line.strip() or line.startswith("#"):
            continue
        neg = line.startswith("!")
        pat = line[1:] if neg else line
        dir_only = pat.endswith("/")
        pat = pat.rstrip("/")
        anchored = "/" in pat
        out.append((line, neg, pat.lstrip("/"), dir_only, anchored))
    return out

def matches(path, pat, dir_only, anchored):
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    for i, cand in enumerate(candidates):
        is_dir = i < len(parts) - 1 or path.endswith("/")
        if dir_only and not is_dir:
            continue
        name = cand if anchored else cand.split("/")[-1]
        if fnmatch.fnmatch(name, pat.replace("**/", "*")) or fnmatch.fnmatch(cand, pat):
            return True
    return False

if len(sys.argv) != 3:
    sys.exit("usage: ignorecheck.py <.gitignore> <paths.txt>")
rs = rules(sys.argv[1])
for line in open(sys.argv[2], encoding="utf-8"):
    path = line.strip()
    if not path:
        continue
    verdict = None
    for raw, neg, pat, dir_only, anchored in rs:
        if matches(path, pat, dir_only, anchored):
            verdict = (not neg, raw)
    if verdict and verdict[0]:
        print(f"ignored   {path}  (by {verdict[1]!r})")
    else:
        print(f"tracked   {path}" + (f"  (re-included by {verdict[1]!r})" if verdict else ""))
''',
        samples={"gitignore": "*.log\nbuild/\n/secrets.txt\n!keep.log\n", "paths.txt": "app.log\nkeep.log\nbuild/out.bin\nsrc/secrets.txt\nsecrets.txt\nsrc/main.py\n"},
    ),
    PoolSkill(
        name="env-file-diff",
        description="Compare two dotenv (.env) files and list keys that are missing, added or changed, masking secret-looking values.",
        tags=["dotenv", "configuration", "diff"],
        when=["Which variables does production have that staging lacks", "Review .env changes"],
        script="envdiff.py",
        args="<old.env> <new.env>",
        limits="Values are compared as strings; variable expansion is not performed.",
        code='''
import re, sys

SECRET = re.compile(r"(KEY|SECRET|TOKEN|PASSWORD|PASS)", re.I)

def load(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.removeprefix("export ").split("=", 1)
        out[k.strip()] = v.strip().strip('"').strip("'")
    return out

def show(k, v):
    return "****" if SECRET.search(k) else v

if len(sys.argv) != 3:
    sys.exit("usage: envdiff.py <old.env> <new.env>")
a, b = load(sys.argv[1]), load(sys.argv[2])
for k in sorted(a.keys() | b.keys()):
    if k not in b:
        print(f"- {k} (only in {sys.argv[1]})")
    elif k not in a:
        print(f"+ {k}={show(k, b[k])}")
    elif a[k] != b[k]:
        print(f"~ {k}: {show(k, a[k])} -> {show(k, b[k])}")
''',
        samples={"staging.env": "DB_HOST=db.staging\nDB_PASSWORD=abc\nFEATURE_X=on\n", "production.env": "DB_HOST=db.prod\nDB_PASSWORD=xyz\nCACHE_TTL=60\n"},
    ),
    PoolSkill(
        name="sql-formatter",
        description="Reformat SQL queries for readability: uppercase keywords and start each major clause on its own line.",
        tags=["sql", "formatting", "database"],
        when=["Make a one-line SQL query readable", "Normalise query style before review"],
        script="sqlfmt.py",
        args="<query.sql>",
        limits="A lexical formatter: it does not parse SQL or validate it; string literals are preserved.",
        code='''
import re, sys

CLAUSES = ["select", "from", "where", "group by", "having", "order by", "limit", "union", "left join", "right join", "inner join", "join", "on", "and", "or", "insert into", "values", "update", "set", "delete from"]
WORDS = set(" ".join(CLAUSES).split()) | {"as", "in", "not", "null", "is", "desc", "asc", "distinct", "count", "sum", "avg", "case", "when", "then", "else", "end"}

if len(sys.argv) != 2:
    sys.exit("usage: sqlfmt.py <query.sql>")
text = open(sys.argv[1], encoding="utf-8").read()
tokens = re.findall(r"'(?:[^']|'')*'|\\w+|[^\\w\\s]", text)
out = " ".join(t.upper() if t.lower() in WORDS else t for t in tokens)
out = re.sub(r"\\s+([,;)])", r"\\1", out).replace("( ", "(")
out = re.sub(r"(?<=\\w) \\. (?=\\w)", ".", out)
# One pass, longest clause first, so the JOIN of a LEFT JOIN is not split again.
alternation = "|".join(re.escape(c.upper()) for c in sorted(CLAUSES, key=len, reverse=True))
out = re.sub(rf"\\s+({alternation})\\b", lambda m: "\\n" + ("  " if m.group(1) in ("AND", "OR", "ON") else "") + m.group(1), out)
print(out.strip())
''',
        samples={"query.sql": "select u.id, count(o.id) as orders from users u left join orders o on o.user_id = u.id where u.active = 1 and o.total > 10 group by u.id order by orders desc limit 5;\n"},
    ),
    PoolSkill(
        name="regex-tester",
        description="Test a regular expression against each line of a file and show matches and capture groups.",
        tags=["regex", "testing", "text"],
        when=["Does my pattern match these examples", "Debug capture groups of a regex"],
        script="regextest.py",
        args="<lines.txt> [--pattern REGEX]",
        limits="Python 're' syntax; the default pattern matches ISO dates.",
        code='''
import argparse, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--pattern", default=r"(\\d{4})-(\\d{2})-(\\d{2})")
a = ap.parse_args()
try:
    rx = re.compile(a.pattern)
except re.error as exc:
    raise SystemExit(f"error: pattern does not compile: {exc}")
hits = 0
for n, line in enumerate(open(a.path, encoding="utf-8"), 1):
    ms = list(rx.finditer(line))
    hits += bool(ms)
    for m in ms:
        print(f"line {n}: {m.group(0)!r} groups={m.groups()}")
print(f"{hits} matching line(s) for /{a.pattern}/")
''',
        samples={"examples.txt": "released 2024-05-01, patched 2024-06-12\nno date here\n1999-12-31 party\n"},
    ),
    PoolSkill(
        name="text-diff",
        description="Show a unified line diff between two text files with a summary of lines added and removed.",
        tags=["diff", "text", "comparison"],
        when=["What changed between two versions of a document", "Compare two plain-text exports"],
        script="textdiff.py",
        args="<old.txt> <new.txt>",
        limits="Line-based; no word-level highlighting.",
        code='''
import difflib, sys

if len(sys.argv) != 3:
    sys.exit("usage: textdiff.py <old.txt> <new.txt>")
a = open(sys.argv[1], encoding="utf-8").read().splitlines(keepends=True)
b = open(sys.argv[2], encoding="utf-8").read().splitlines(keepends=True)
diff = list(difflib.unified_diff(a, b, fromfile=sys.argv[1], tofile=sys.argv[2]))
sys.stdout.writelines(line if line.endswith("\\n") else line + "\\n" for line in diff)
added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
print(f"{added} line(s) added, {removed} removed")
''',
        samples={"v1.txt": "apples\nbananas\ncherries\n", "v2.txt": "apples\nblueberries\ncherries\ndates\n"},
    ),
    PoolSkill(
        name="email-extractor",
        description="Extract unique email addresses from free text, grouped by domain, with obfuscated forms like 'name at domain dot com' normalised.",
        tags=["email", "extraction", "contacts"],
        when=["Pull all contact emails out of a document", "Which domains appear in this mail thread"],
        script="emails.py",
        args="<text.txt>",
        limits="Syntax-level extraction; no mailbox verification.",
        code='''
import collections, re, sys

if len(sys.argv) != 2:
    sys.exit("usage: emails.py <text.txt>")
text = open(sys.argv[1], encoding="utf-8").read()
text = re.sub(r"\\s*[\\[(]\\s*at\\s*[\\])]\\s*|\\s+at\\s+(?=[\\w-]+\\s*(?:[\\[(]\\s*dot|\\s+dot\\s))", "@", text, flags=re.I)
text = re.sub(r"\\s*[\\[(]\\s*dot\\s*[\\])]\\s*|\\s+dot\\s+", ".", text, flags=re.I)
found = sorted({m.lower() for m in re.findall(r"[\\w.+-]+@[\\w-]+(?:\\.[\\w-]+)+", text)})
by_domain = collections.defaultdict(list)
for e in found:
    by_domain[e.split("@")[1]].append(e)
for domain in sorted(by_domain):
    print(f"{domain}: {', '.join(by_domain[domain])}")
print(f"{len(found)} unique address(es)")
''',
        samples={"thread.txt": "Contact ana@example.com or Bob.Smith@Example.com.\nSales: sales [at] shop [dot] io; ana@example.com again.\n"},
    ),
    PoolSkill(
        name="subnet-calculator",
        description="Calculate IPv4/IPv6 subnet details from CIDR notation: network, broadcast, netmask, usable host range and count.",
        tags=["networking", "cidr", "ip"],
        when=["How many hosts fit in a /27", "Is this address inside that subnet"],
        script="subnet.py",
        args="<networks.txt>",
        limits="Host bits set in the input are allowed (strict=False) and reported.",
        code='''
import ipaddress, sys

if len(sys.argv) != 2:
    sys.exit("usage: subnet.py <networks.txt>  (one CIDR per line, optionally followed by an address to test)")
for line in open(sys.argv[1], encoding="utf-8"):
    parts = line.split()
    if not parts:
        continue
    try:
        net = ipaddress.ip_network(parts[0], strict=False)
    except ValueError as exc:
        print(f"{parts[0]}: {exc}")
        continue
    hosts = net.num_addresses - (2 if net.version == 4 and net.prefixlen < 31 else 0)
    first = net.network_address + (1 if hosts != net.num_addresses else 0)
    last = net.broadcast_address - (1 if hosts != net.num_addresses else 0)
    print(f"{parts[0]}: network {net.network_address}/{net.prefixlen} netmask {net.netmask} "
          f"broadcast {net.broadcast_address} hosts {hosts} ({first} - {last})")
    for addr in parts[1:]:
        print(f"  {addr} {'is' if ipaddress.ip_address(addr) in net else 'is not'} in {net}")
''',
        samples={"networks.txt": "192.168.10.77/27 192.168.10.70 192.168.10.100\n10.0.0.0/8\n2001:db8::/126\n300.1.1.1/24\n"},
    ),
]
