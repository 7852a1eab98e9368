"""Decoy-pool skills, part 2: files, binary formats, source code and validators.

Binary samples (PNG, WAV, ZIP) are built here byte for byte so the generator's
output is identical on every run.
"""

from __future__ import annotations

import hashlib
import io
import struct
import wave
import zipfile
import zlib

from aces_bench.examples._decoy_pool_model import PoolSkill


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def _wav(seconds: float, rate: int = 8000) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\x00\x10" * int(seconds * rate))
    return buf.getvalue()


def _manifest(files: dict[str, bytes]) -> str:
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in files.items())


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in (("report/summary.txt", b"quarterly summary\n" * 40), ("report/data.csv", b"a,b\n1,2\n" * 25)):
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return buf.getvalue()


FILE_SKILLS: list[PoolSkill] = [
    PoolSkill(
        name="checksum-manifest",
        description="Verify files against a SHA-256 checksum manifest (sha256sum format) and report missing or corrupted files.",
        tags=["checksums", "integrity", "sha256"],
        when=["Did the download arrive intact", "Check a release folder against its SHA256SUMS file"],
        script="checksums.py",
        args="<manifest.sha256>",
        limits="SHA-256 only; paths in the manifest are relative to the manifest's folder.",
        code='''
import hashlib, pathlib, sys

if len(sys.argv) != 2:
    sys.exit("usage: checksums.py <manifest.sha256>")
manifest = pathlib.Path(sys.argv[1])
bad = 0
for line in manifest.read_text(encoding="utf-8").splitlines():
    if not line.strip():
        continue
    digest, _, name = line.partition("  ")
    path = manifest.parent / name.lstrip("*")
    if not path.is_file():
        print(f"MISSING  {name}"); bad += 1
        continue
    ok = hashlib.sha256(path.read_bytes()).hexdigest() == digest.strip().lower()
    print(f"{'OK      ' if ok else 'FAILED  '} {name}")
    bad += not ok
print(f"{bad} problem(s)")
''',
        samples={"SHA256SUMS": _manifest({"hello.txt": b"hello\n", "notes.txt": b"original notes\n", "gone.txt": b"x"}),
                 "hello.txt": "hello\n", "notes.txt": "edited after the manifest was written\n"},
        inputs=("SHA256SUMS",),
    ),
    PoolSkill(
        name="duplicate-finder",
        description="Find duplicate files in a folder tree by content hash and show how much space the copies waste.",
        tags=["files", "duplicates", "disk-space"],
        when=["Free disk space taken by copies", "Which photos were imported twice"],
        script="dupes.py",
        args="<folder>",
        limits="Compares whole-file SHA-256; hard links are counted as duplicates.",
        code='''
import collections, hashlib, os, sys

if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
    sys.exit("usage: dupes.py <folder>")
by_size = collections.defaultdict(list)
for root, _, files in os.walk(sys.argv[1]):
    for f in files:
        p = os.path.join(root, f)
        by_size[os.path.getsize(p)].append(p)
groups = collections.defaultdict(list)
for size, paths in by_size.items():
    if len(paths) > 1:
        for p in paths:
            with open(p, "rb") as fh:
                groups[(size, hashlib.sha256(fh.read()).hexdigest())].append(p)
wasted = 0
for (size, digest), paths in sorted(groups.items()):
    if len(paths) > 1:
        wasted += size * (len(paths) - 1)
        print(f"{len(paths)} copies, {size} bytes each ({digest[:12]}):")
        for p in sorted(paths):
            print(f"  {p}")
print(f"wasted: {wasted} bytes")
''',
        samples={"photos/a.jpg": "same bytes\n", "photos/b.jpg": "same bytes\n", "photos/c.jpg": "different\n"},
        inputs=("photos",),
    ),
    PoolSkill(
        name="ics-events",
        description="List the events of an iCalendar (.ics) file in start-time order with duration, location and recurrence.",
        tags=["calendar", "ics", "events"],
        when=["What is on this calendar export", "List meetings from an .ics invite"],
        script="icsevents.py",
        args="<calendar.ics>",
        limits="Reads VEVENTs only; recurrence rules are shown, not expanded; times are shown as written.",
        code='''
import datetime, sys

def parse_dt(v):
    v = v.rstrip("Z")
    fmt = "%Y%m%dT%H%M%S" if "T" in v else "%Y%m%d"
    return datetime.datetime.strptime(v, fmt)

if len(sys.argv) != 2:
    sys.exit("usage: icsevents.py <calendar.ics>")
lines = []
for raw in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if raw.startswith((" ", "\\t")) and lines:
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
''',
        samples={"team.ics": "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nSUMMARY:Sprint review\r\nDTSTART:20240515T140000Z\r\nDTEND:20240515T150000Z\r\nLOCATION:Room 4\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nSUMMARY:Stand-up\r\nDTSTART:20240513T091500\r\nDTEND:20240513T093000\r\nRRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"},
    ),
    PoolSkill(
        name="vcard-contacts",
        description="Extract names, emails, phone numbers and organisations from a vCard (.vcf) contacts export as CSV.",
        tags=["contacts", "vcard", "csv"],
        when=["Turn a phone's contact export into a spreadsheet", "Who is in this .vcf file"],
        script="vcards.py",
        args="<contacts.vcf>",
        limits="vCard 3.0/4.0 text properties only; photos and custom X- fields are skipped.",
        code='''
import csv, sys

if len(sys.argv) != 2:
    sys.exit("usage: vcards.py <contacts.vcf>")
out = csv.writer(sys.stdout, lineterminator="\\n")
out.writerow(["name", "email", "phone", "org"])
card = None
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if line.upper() == "BEGIN:VCARD":
        card = {"FN": "", "EMAIL": [], "TEL": [], "ORG": ""}
    elif line.upper() == "END:VCARD" and card is not None:
        out.writerow([card["FN"], ";".join(card["EMAIL"]), ";".join(card["TEL"]), card["ORG"]])
        card = None
    elif card is not None and ":" in line:
        key, value = line.split(":", 1)
        prop = key.split(";")[0].upper()
        if prop in ("EMAIL", "TEL"):
            card[prop].append(value.strip())
        elif prop == "FN":
            card["FN"] = value.strip()
        elif prop == "ORG":
            card["ORG"] = value.replace(";", " / ").strip()
''',
        samples={"contacts.vcf": "BEGIN:VCARD\nVERSION:3.0\nFN:Ada Lovelace\nEMAIL;TYPE=work:ada@example.org\nTEL:+44 20 7946 0000\nORG:Analytical Engines;R&D\nEND:VCARD\nBEGIN:VCARD\nVERSION:4.0\nFN:Grace Hopper\nEMAIL:grace@example.net\nEND:VCARD\n"},
    ),
    PoolSkill(
        name="mime-sniffer",
        description="Identify file types from their magic bytes (PNG, JPEG, PDF, ZIP, gzip, ELF, ...) regardless of the file extension.",
        tags=["files", "mime", "forensics"],
        when=["This .txt attachment is really what", "Files with the wrong extension"],
        script="sniff.py",
        args="<files...>",
        limits="A short built-in signature table; text files are reported as text/plain when they decode as UTF-8.",
        code='''
import sys

SIGNATURES = [
    (b"\\x89PNG\\r\\n\\x1a\\n", "image/png"), (b"\\xff\\xd8\\xff", "image/jpeg"), (b"GIF8", "image/gif"),
    (b"%PDF-", "application/pdf"), (b"PK\\x03\\x04", "application/zip"), (b"\\x1f\\x8b", "application/gzip"),
    (b"\\x7fELF", "application/x-elf"), (b"RIFF", "audio/wav or other RIFF"), (b"SQLite format 3\\x00", "application/x-sqlite3"),
]
if len(sys.argv) < 2:
    sys.exit("usage: sniff.py <files...>")
for path in sys.argv[1:]:
    head = open(path, "rb").read(64)
    kind = next((m for sig, m in SIGNATURES if head.startswith(sig)), None)
    if kind is None:
        try:
            head.decode("utf-8")
            kind = "text/plain" if head else "empty"
        except UnicodeDecodeError:
            kind = "application/octet-stream (unknown)"
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    print(f"{path}: {kind}" + (f"  (extension .{ext})" if ext else ""))
''',
        samples={"invoice.txt": b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "notes.dat": "plain words\n"},
    ),
    PoolSkill(
        name="png-dimensions",
        description="Read the width, height, bit depth and colour type of PNG images from their header without any imaging library.",
        tags=["images", "png", "metadata"],
        when=["How big is this image in pixels", "Check icon sizes before a release"],
        script="pnginfo.py",
        args="<images...>",
        limits="PNG only (reads the IHDR chunk); other formats are refused.",
        code='''
import struct, sys

COLOR = {0: "greyscale", 2: "RGB", 3: "palette", 4: "greyscale+alpha", 6: "RGBA"}
if len(sys.argv) < 2:
    sys.exit("usage: pnginfo.py <images...>")
for path in sys.argv[1:]:
    data = open(path, "rb").read(33)
    if data[:8] != b"\\x89PNG\\r\\n\\x1a\\n" or data[12:16] != b"IHDR":
        print(f"{path}: not a PNG file")
        continue
    w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
    print(f"{path}: {w} x {h} px, {depth}-bit {COLOR.get(ctype, ctype)}")
''',
        samples={"icon.png": _png(3, 2)},
    ),
    PoolSkill(
        name="wav-info",
        description="Report the duration, sample rate, channels and bit depth of WAV audio files.",
        tags=["audio", "wav", "metadata"],
        when=["How long is this recording", "Check audio format before transcription"],
        script="wavinfo.py",
        args="<audio.wav>",
        limits="Uncompressed PCM WAV only.",
        code='''
import sys, wave

if len(sys.argv) != 2:
    sys.exit("usage: wavinfo.py <audio.wav>")
try:
    with wave.open(sys.argv[1], "rb") as w:
        frames, rate = w.getnframes(), w.getframerate()
        print(f"duration {frames / rate:.3f} s, {rate} Hz, {w.getnchannels()} channel(s), {8 * w.getsampwidth()}-bit, {frames} frames")
except (wave.Error, EOFError) as exc:
    sys.exit(f"error: not a PCM WAV file ({exc})")
''',
        samples={"memo.wav": _wav(1.5)},
    ),
    PoolSkill(
        name="zip-inspector",
        description="List the entries of a ZIP archive with sizes and compression ratios, and test every entry's CRC.",
        tags=["zip", "archives", "files"],
        when=["What is inside this archive", "Is this ZIP corrupted"],
        script="zipinfo.py",
        args="<archive.zip>",
        limits="ZIP only; encrypted entries are listed but not tested.",
        code='''
import sys, zipfile

if len(sys.argv) != 2:
    sys.exit("usage: zipinfo.py <archive.zip>")
try:
    z = zipfile.ZipFile(sys.argv[1])
except zipfile.BadZipFile as exc:
    sys.exit(f"error: {exc}")
total_c = total_u = 0
for info in z.infolist():
    ratio = 1 - info.compress_size / info.file_size if info.file_size else 0
    total_c += info.compress_size; total_u += info.file_size
    print(f"{info.file_size:10d} {info.compress_size:10d} {ratio:6.1%}  {info.filename}")
bad = z.testzip()
print(f"{len(z.infolist())} entries, {total_u} bytes -> {total_c} bytes; CRC check: {'FAILED at ' + bad if bad else 'ok'}")
''',
        samples={"report.zip": _zip()},
    ),
    PoolSkill(
        name="line-endings",
        description="Detect CRLF, LF and mixed line endings, trailing whitespace and a missing final newline in text files.",
        tags=["text", "line-endings", "hygiene"],
        when=["Why does git show every line as changed", "Check files for Windows line endings"],
        script="eol.py",
        args="<files...>",
        limits="Reports only; it never rewrites files.",
        code='''
import sys

if len(sys.argv) < 2:
    sys.exit("usage: eol.py <files...>")
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    crlf = data.count(b"\\r\\n")
    lf = data.count(b"\\n") - crlf
    kind = "mixed" if crlf and lf else "CRLF" if crlf else "LF" if lf else "none"
    trailing = sum(1 for line in data.split(b"\\n") if line.rstrip(b"\\r") != line.rstrip(b"\\r").rstrip(b" \\t"))
    final = "yes" if data.endswith(b"\\n") or not data else "no"
    print(f"{path}: {kind} endings ({crlf} CRLF, {lf} LF), {trailing} line(s) with trailing whitespace, final newline: {final}")
''',
        samples={"mixed.txt": b"first line\r\nsecond line  \nthird"},
    ),
    PoolSkill(
        name="todo-scanner",
        description="Find TODO, FIXME, HACK and XXX comments in source files and list them with file, line and author tag.",
        tags=["code", "todo", "maintenance"],
        when=["What technical debt is marked in the code", "List FIXMEs before a release"],
        script="todos.py",
        args="<sources...>",
        limits="Matches comment markers '#', '//', '/*', '--' and ';' only.",
        code='''
import re, sys

RX = re.compile(r"(?:#|//|/\\*|--|;)\\s*(TODO|FIXME|HACK|XXX)(?:\\((\\w+)\\))?:?\\s*(.*)")
if len(sys.argv) < 2:
    sys.exit("usage: todos.py <sources...>")
counts = {}
for path in sys.argv[1:]:
    for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        m = RX.search(line)
        if m:
            tag, who, text = m.groups()
            counts[tag] = counts.get(tag, 0) + 1
            print(f"{path}:{n}: {tag}{f' ({who})' if who else ''}: {text.strip().rstrip('*/').strip()}")
print(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "no markers found")
''',
        samples={"worker.py": "def run():\n    # TODO(ana): retry on timeout\n    pass  # FIXME: handle empty queue\n\n# just a comment\n"},
    ),
    PoolSkill(
        name="python-imports",
        description="List the modules a Python file imports, split into standard library, third-party and local imports.",
        tags=["python", "dependencies", "ast"],
        when=["Which packages does this script need", "Write a requirements list for a module"],
        script="imports.py",
        args="<module.py>",
        limits="Static analysis: imports built at run time (importlib) are not seen.",
        code='''
import ast, sys

if len(sys.argv) != 2:
    sys.exit("usage: imports.py <module.py>")
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1])
names = set()
for node in ast.walk(tree):
    if isinstance(node, ast.Import):
        names.update(a.name.split(".")[0] for a in node.names)
    elif isinstance(node, ast.ImportFrom):
        names.add("." * node.level + (node.module or "").split(".")[0])
stdlib = set(getattr(sys, "stdlib_module_names", ()))
groups = {"standard library": [], "third-party": [], "local (relative)": []}
for n in sorted(names):
    key = "local (relative)" if n.startswith(".") else "standard library" if n in stdlib else "third-party"
    groups[key].append(n)
for key, mods in groups.items():
    print(f"{key}: {', '.join(mods) or '-'}")
''',
        samples={"app.py": "import os, sys\nimport requests\nfrom collections import Counter\nfrom . import models\nfrom yaml import safe_load\n"},
    ),
    PoolSkill(
        name="docstring-coverage",
        description="Measure docstring coverage of a Python module: which functions, classes and methods lack a docstring.",
        tags=["python", "documentation", "quality"],
        when=["How well documented is this module", "Find public functions without docstrings"],
        script="doccov.py",
        args="<module.py>",
        limits="Private names (leading underscore) are skipped.",
        code='''
import ast, sys

if len(sys.argv) != 2:
    sys.exit("usage: doccov.py <module.py>")
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read(), sys.argv[1])
items = [(n.name, n.lineno, ast.get_docstring(n) is not None) for n in ast.walk(tree)
         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_")]
for name, line, ok in sorted(items, key=lambda i: i[1]):
    if not ok:
        print(f"missing: {name} (line {line})")
done = sum(ok for *_, ok in items)
print(f"coverage: {done}/{len(items)} = {done / len(items):.0%}" if items else "no public definitions")
''',
        samples={"shapes.py": 'class Circle:\n    """A circle."""\n    def area(self):\n        return 3.14\n\ndef perimeter(r):\n    """Perimeter of a circle."""\n    return 6.28 * r\n\ndef _helper():\n    pass\n'},
    ),
    PoolSkill(
        name="json-diff",
        description="Compare two JSON documents structurally and list added, removed and changed values by JSON path.",
        tags=["json", "diff", "comparison"],
        when=["What changed between two API responses", "Compare JSON fixtures"],
        script="jsondiff.py",
        args="<old.json> <new.json>",
        limits="Arrays are compared position by position.",
        code='''
import json, sys

def diff(a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(a.keys() | b.keys()):
            p = f"{path}.{k}"
            if k not in b:
                out.append(f"- {p}: {json.dumps(a[k])}")
            elif k not in a:
                out.append(f"+ {p}: {json.dumps(b[k])}")
            else:
                diff(a[k], b[k], p, out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            p = f"{path}[{i}]"
            if i >= len(b):
                out.append(f"- {p}: {json.dumps(a[i])}")
            elif i >= len(a):
                out.append(f"+ {p}: {json.dumps(b[i])}")
            else:
                diff(a[i], b[i], p, out)
    elif a != b:
        out.append(f"~ {path}: {json.dumps(a)} -> {json.dumps(b)}")

if len(sys.argv) != 3:
    sys.exit("usage: jsondiff.py <old.json> <new.json>")
out = []
diff(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), "$", out)
print("\\n".join(out) if out else "no differences")
''',
        samples={"before.json": '{"name": "svc", "replicas": 2, "ports": [80, 443], "debug": true}\n', "after.json": '{"name": "svc", "replicas": 3, "ports": [80], "region": "eu"}\n'},
    ),
    PoolSkill(
        name="morse-code",
        description="Encode text to Morse code or decode Morse code (dots, dashes, '/' between words) back to text.",
        tags=["morse", "encoding", "radio"],
        when=["Translate a message to Morse", "Decode a Morse transcript"],
        script="morse.py",
        args="<message.txt>",
        limits="Letters, digits and common punctuation; unknown symbols become '?'.",
        code='''
import sys

CODE = dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,?!/@", (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --.. "
    "----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----. .-.-.- --..-- ..--.. -.-.-- -..-. .--.-.").split()))
BACK = {v: k for k, v in CODE.items()}
if len(sys.argv) != 2:
    sys.exit("usage: morse.py <message.txt>")
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if not line.strip():
        continue
    if set(line) <= set(".-/ "):
        words = [w.split() for w in line.split("/")]
        print("decoded: " + " ".join("".join(BACK.get(c, "?") for c in w) for w in words))
    else:
        print("encoded: " + " / ".join(" ".join(CODE.get(ch, "?") for ch in w) for w in line.upper().split()))
''',
        samples={"message.txt": "SOS at dawn\n... --- ... / .- -\n"},
    ),
    PoolSkill(
        name="slugify",
        description="Turn titles into URL-safe slugs: lowercase ASCII, accents transliterated, words joined by hyphens, unique per file.",
        tags=["url", "slug", "text"],
        when=["Make URL paths for blog post titles", "Safe file names from headings"],
        script="slugify.py",
        args="<titles.txt> [--max 60]",
        limits="Non-Latin scripts without an ASCII transliteration are dropped.",
        code='''
import argparse, re, unicodedata

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--max", type=int, default=60)
a = ap.parse_args()
used = {}
for line in open(a.path, encoding="utf-8"):
    title = line.strip()
    if not title:
        continue
    ascii_ = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_.lower()).strip("-")[: a.max].rstrip("-") or "untitled"
    n = used.get(slug, 0)
    used[slug] = n + 1
    print(f"{title} -> {slug if n == 0 else f'{slug}-{n + 1}'}")
''',
        samples={"titles.txt": "Crème Brûlée: A Love Story\n10 Tips & Tricks for Python!\nCrème brûlée – a love story\n"},
    ),
    PoolSkill(
        name="isbn-validator",
        description="Validate ISBN-10 and ISBN-13 book numbers by checksum and convert valid ISBN-10s to ISBN-13.",
        tags=["isbn", "books", "validation"],
        when=["Is this ISBN valid", "Convert old ISBN-10 catalogue numbers"],
        script="isbn.py",
        args="<isbns.txt>",
        limits="Checksums only; it does not look the book up.",
        code='''
import sys

def check10(d):
    total = sum((10 - i) * (10 if c == "X" else int(c)) for i, c in enumerate(d))
    return total % 11 == 0

def check13(d):
    return sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(d)) % 10 == 0

def to13(d):
    core = "978" + d[:9]
    return core + str((10 - sum((3 if i % 2 else 1) * int(c) for i, c in enumerate(core)) % 10) % 10)

if len(sys.argv) != 2:
    sys.exit("usage: isbn.py <isbns.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    raw = line.strip()
    d = raw.replace("-", "").replace(" ", "").upper()
    if not d:
        continue
    if len(d) == 10 and d[:9].isdigit() and (d[9].isdigit() or d[9] == "X"):
        print(f"{raw}: ISBN-10 {'valid -> ' + to13(d) if check10(d) else 'INVALID checksum'}")
    elif len(d) == 13 and d.isdigit():
        print(f"{raw}: ISBN-13 {'valid' if check13(d) else 'INVALID checksum'}")
    else:
        print(f"{raw}: not an ISBN (need 10 or 13 digits)")
''',
        samples={"isbns.txt": "0-306-40615-2\n978-0-306-40615-7\n0-306-40615-3\n12345\n"},
    ),
    PoolSkill(
        name="luhn-check",
        description="Validate card and account numbers with the Luhn checksum and identify the card network from the prefix.",
        tags=["luhn", "payments", "validation"],
        when=["Is this card number well-formed", "Catch typos in account numbers"],
        script="luhn.py",
        args="<numbers.txt>",
        limits="Format check only: it cannot tell whether a card exists; numbers are masked in output.",
        code='''
import sys

def luhn(d):
    total = 0
    for i, c in enumerate(reversed(d)):
        n = int(c)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0

def network(d):
    if d.startswith("4"):
        return "Visa"
    if d[:2] in ("51", "52", "53", "54", "55") or 2221 <= int(d[:4]) <= 2720:
        return "Mastercard"
    if d[:2] in ("34", "37"):
        return "American Express"
    return "unknown network"

if len(sys.argv) != 2:
    sys.exit("usage: luhn.py <numbers.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    d = "".join(ch for ch in line if ch.isdigit())
    if len(d) < 12:
        continue
    masked = "*" * (len(d) - 4) + d[-4:]
    print(f"{masked}: {'valid' if luhn(d) else 'INVALID'} ({network(d)})")
''',
        samples={"cards.txt": "4111 1111 1111 1111\n5500-0000-0000-0004\n4111 1111 1111 1112\n3782 822463 10005\n"},
    ),
    PoolSkill(
        name="iban-validator",
        description="Validate IBAN bank account numbers: country length and the ISO 13616 mod-97 check digits.",
        tags=["iban", "banking", "validation"],
        when=["Is this IBAN correct before a transfer", "Check a list of supplier bank accounts"],
        script="iban.py",
        args="<ibans.txt>",
        limits="Country lengths for a subset of countries; others get the checksum test only.",
        code='''
import sys

LENGTHS = {"DE": 22, "FR": 27, "GB": 22, "NL": 18, "ES": 24, "IT": 27, "BE": 16, "CH": 21, "AT": 20, "IE": 22}
if len(sys.argv) != 2:
    sys.exit("usage: iban.py <ibans.txt>")
for line in open(sys.argv[1], encoding="utf-8"):
    raw = line.strip()
    iban = raw.replace(" ", "").upper()
    if not iban:
        continue
    if not iban.isalnum() or len(iban) < 15:
        print(f"{raw}: not an IBAN")
        continue
    want = LENGTHS.get(iban[:2])
    if want and len(iban) != want:
        print(f"{raw}: INVALID length {len(iban)} for {iban[:2]} (expected {want})")
        continue
    number = int("".join(str(int(ch, 36)) for ch in iban[4:] + iban[:4]))
    print(f"{raw}: {'valid' if number % 97 == 1 else 'INVALID check digits'}")
''',
        samples={"ibans.txt": "GB82 WEST 1234 5698 7654 32\nDE89 3704 0044 0532 0130 00\nDE89 3704 0044 0532 0130 01\nNL91ABNA041716430\n"},
    ),
    PoolSkill(
        name="color-converter",
        description="Convert colours between hex, RGB and HSL notations and report WCAG contrast against white and black.",
        tags=["color", "design", "accessibility"],
        when=["What is #1e90ff in HSL", "Is this text colour readable on white"],
        script="colors.py",
        args="<colors.txt>",
        limits="sRGB only; named CSS colours are not recognised.",
        code='''
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
    elif re.fullmatch(r"\\d{1,3},\\s*\\d{1,3},\\s*\\d{1,3}", t):
        rgb = tuple(min(int(x), 255) for x in t.split(","))
    else:
        if t:
            print(f"{t}: not a hex or r,g,b colour")
        continue
    hh, ll, ss = colorsys.rgb_to_hls(*(c / 255 for c in rgb))
    L = lum(rgb)
    print(f"{t}: #{''.join(f'{c:02x}' for c in rgb)} rgb{rgb} hsl({hh * 360:.0f}, {ss:.0%}, {ll:.0%}) "
          f"contrast vs white {contrast(L, 1.0):.2f}, vs black {contrast(L, 0.0):.2f}")
''',
        samples={"palette.txt": "#1e90ff\n0f0\n255, 200, 0\nnavy\n"},
    ),
    PoolSkill(
        name="readability-score",
        description="Compute Flesch reading ease and Flesch-Kincaid grade level of English text, with sentence and word counts.",
        tags=["writing", "readability", "text"],
        when=["Is this documentation too hard to read", "Target a reading level for a notice"],
        script="readability.py",
        args="<text.txt>",
        limits="Syllables are estimated by vowel groups; English only.",
        code='''
import re, sys

def syllables(word):
    groups = re.findall(r"[aeiouy]+", word.lower())
    n = len(groups) - (1 if word.lower().endswith("e") and len(groups) > 1 else 0)
    return max(n, 1)

if len(sys.argv) != 2:
    sys.exit("usage: readability.py <text.txt>")
text = open(sys.argv[1], encoding="utf-8").read()
sentences = max(len(re.findall(r"[.!?]+(?:\\s|$)", text)), 1)
words = re.findall(r"[A-Za-z']+", text)
if not words:
    sys.exit("error: no words")
syl = sum(syllables(w) for w in words)
ease = 206.835 - 1.015 * len(words) / sentences - 84.6 * syl / len(words)
grade = 0.39 * len(words) / sentences + 11.8 * syl / len(words) - 15.59
print(f"{sentences} sentences, {len(words)} words, {syl} syllables")
print(f"Flesch reading ease {ease:.1f}, Flesch-Kincaid grade {grade:.1f}")
''',
        samples={"notice.txt": "The pool is closed today. Maintenance work requires temporary suspension of all aquatic recreational activities. We apologise.\n"},
    ),
    PoolSkill(
        name="prime-factors",
        description="Factorise integers into primes, flag primes, and compute the GCD and LCM of the whole list.",
        tags=["math", "primes", "number-theory"],
        when=["Is 2027 prime", "Greatest common divisor of several numbers"],
        script="factor.py",
        args="<numbers.txt>",
        limits="Trial division: fine up to about 10^12.",
        code='''
import math, sys

def factor(n):
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d); n //= d
        d += 1 if d == 2 else 2
    if n > 1:
        out.append(n)
    return out

if len(sys.argv) != 2:
    sys.exit("usage: factor.py <numbers.txt>")
nums = [int(t) for t in open(sys.argv[1], encoding="utf-8").read().split() if t.isdigit() and int(t) > 1]
for n in nums:
    f = factor(n)
    print(f"{n} = {' x '.join(map(str, f))}" + ("  (prime)" if len(f) == 1 else ""))
if nums:
    print(f"gcd = {math.gcd(*nums)}, lcm = {math.lcm(*nums)}")
''',
        samples={"numbers.txt": "84 2027 360 1001\n"},
    ),
    PoolSkill(
        name="srt-shift",
        description="Shift all subtitle timings in an SRT file by a number of seconds to fix audio/subtitle sync.",
        tags=["subtitles", "srt", "video"],
        when=["Subtitles appear two seconds late", "Re-sync an SRT file to a new cut"],
        script="srtshift.py",
        args="<subs.srt> [--seconds S]",
        limits="Times that would go below zero are clamped to 00:00:00,000.",
        code='''
import argparse, re

ap = argparse.ArgumentParser()
ap.add_argument("path")
ap.add_argument("--seconds", type=float, default=-1.0)
a = ap.parse_args()
RX = re.compile(r"(\\d{2}):(\\d{2}):(\\d{2}),(\\d{3})")

def shift(m):
    h, mi, s, ms = map(int, m.groups())
    t = max(((h * 60 + mi) * 60 + s) * 1000 + ms + round(a.seconds * 1000), 0)
    return f"{t // 3600000:02d}:{t // 60000 % 60:02d}:{t // 1000 % 60:02d},{t % 1000:03d}"

text = open(a.path, encoding="utf-8").read()
print(RX.sub(shift, text), end="")
''',
        samples={"episode.srt": "1\n00:00:01,500 --> 00:00:03,000\nHello.\n\n2\n00:01:00,000 --> 00:01:02,250\nGoodbye.\n"},
    ),
    PoolSkill(
        name="geo-distance",
        description="Compute great-circle (haversine) distances between latitude/longitude pairs and the total length of a route.",
        tags=["geo", "distance", "maps"],
        when=["How far is Paris from Berlin as the crow flies", "Length of a route through waypoints"],
        script="haversine.py",
        args="<waypoints.csv>",
        limits="Spherical Earth (radius 6371 km); no road distances.",
        code='''
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
''',
        samples={"route.csv": "name,lat,lon\nParis,48.8566,2.3522\nBerlin,52.52,13.405\nWarsaw,52.2297,21.0122\n"},
    ),
]
