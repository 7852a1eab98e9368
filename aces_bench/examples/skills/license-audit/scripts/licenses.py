"""License name normalisation and SPDX-expression evaluation (imported by audit_licenses.py)."""

import re

# Common spellings (PyPI classifiers, npm fields, free text) -> SPDX-style base ids.
# "-only"/"-or-later" suffixes are dropped: policies are written per licence family.
ALIASES = {
    "mit": "MIT", "mit license": "MIT", "the mit license": "MIT", "expat": "MIT", "mit-0": "MIT-0",
    "apache": "Apache-2.0", "apache 2": "Apache-2.0", "apache 2.0": "Apache-2.0", "apache-2.0": "Apache-2.0",
    "apache software license": "Apache-2.0", "apache license 2.0": "Apache-2.0",
    "apache license, version 2.0": "Apache-2.0", "apache license version 2.0": "Apache-2.0",
    "bsd": "BSD", "bsd license": "BSD",
    "bsd-2-clause": "BSD-2-Clause", "bsd 2-clause": "BSD-2-Clause", "simplified bsd": "BSD-2-Clause",
    "bsd-3-clause": "BSD-3-Clause", "bsd 3-clause": "BSD-3-Clause", "new bsd": "BSD-3-Clause",
    "new bsd license": "BSD-3-Clause", "modified bsd": "BSD-3-Clause", "0bsd": "0BSD",
    "isc": "ISC", "isc license": "ISC", "isc license (iscl)": "ISC",
    "python software foundation license": "PSF-2.0", "psf": "PSF-2.0", "psf-2.0": "PSF-2.0",
    "mozilla public license 2.0 (mpl 2.0)": "MPL-2.0", "mpl-2.0": "MPL-2.0", "mpl 2.0": "MPL-2.0",
    "gpl": "GPL", "gplv2": "GPL-2.0", "gpl v2": "GPL-2.0", "gpl-2.0": "GPL-2.0",
    "gnu general public license v2 (gplv2)": "GPL-2.0", "gnu general public license v2 or later (gplv2+)": "GPL-2.0",
    "gplv3": "GPL-3.0", "gpl v3": "GPL-3.0", "gpl-3.0": "GPL-3.0", "gpl3": "GPL-3.0",
    "gnu general public license v3 (gplv3)": "GPL-3.0", "gnu general public license v3 or later (gplv3+)": "GPL-3.0",
    "lgpl": "LGPL", "lgpl-2.1": "LGPL-2.1", "lgplv2.1": "LGPL-2.1", "lgplv2+": "LGPL-2.1",
    "gnu lesser general public license v2 or later (lgplv2+)": "LGPL-2.1",
    "gnu library or lesser general public license (lgpl)": "LGPL",
    "lgpl-3.0": "LGPL-3.0", "lgplv3": "LGPL-3.0", "gnu lesser general public license v3 (lgplv3)": "LGPL-3.0",
    "agpl-3.0": "AGPL-3.0", "agplv3": "AGPL-3.0", "gnu affero general public license v3": "AGPL-3.0",
    "gnu affero general public license v3 or later (agplv3+)": "AGPL-3.0",
    "sspl-1.0": "SSPL-1.0", "server side public license": "SSPL-1.0",
    "unlicense": "Unlicense", "the unlicense (unlicense)": "Unlicense", "cc0-1.0": "CC0-1.0",
    "zlib": "Zlib", "zlib/libpng": "Zlib", "bsl-1.0": "BSL-1.0", "boost software license 1.0 (bsl-1.0)": "BSL-1.0",
    "historical permission notice and disclaimer (hpnd)": "HPND", "hpnd": "HPND",
    "busl-1.1": "BUSL-1.1", "elastic-2.0": "Elastic-2.0", "cc-by-nc-4.0": "CC-BY-NC-4.0",
}
UNKNOWN_SPELLINGS = {"", "unknown", "none", "n/a", "proprietary?", "other/proprietary license", "unlicensed"}
_SUFFIX = re.compile(r"(-only|-or-later|\+)$", re.IGNORECASE)
_TOKEN = re.compile(r"\(|\)|\bAND\b|\bOR\b|\bWITH\b|[^()\s]+(?:\s+(?!AND\b|OR\b|WITH\b)[^()\s]+)*")

# Outcome order: a conjunction takes the worst term, a disjunction the best.
RANK = {"allowed": 0, "review": 1, "unknown": 2, "denied": 3}


def canonical(name):
    """Map one licence spelling to a base id, or None when it says nothing usable."""
    text = " ".join(str(name or "").split()).strip().strip(";,")
    low = text.lower()
    if low in UNKNOWN_SPELLINGS or low.startswith(("see license in", "see licence in")):
        return None
    if low in ALIASES:
        return ALIASES[low]
    stripped = _SUFFIX.sub("", text)
    if stripped.lower() in ALIASES:
        return ALIASES[stripped.lower()]
    return stripped


def is_known_spelling(raw):
    low = " ".join(str(raw or "").split()).lower()
    return low in ALIASES or low in UNKNOWN_SPELLINGS or _SUFFIX.sub("", low) in ALIASES


def evaluate(raw, status_of):
    """Evaluate a licence field; ``status_of(id_or_None)`` classifies one licence.

    Handles SPDX expressions (AND, OR, WITH, parentheses) and pip-licenses' '; '-joined
    classifiers, which mean dual licensing and so count as OR. Returns (status, the
    licence id that decided it). An expression that does not parse is judged whole.
    """
    text = str(raw or "")
    if ";" in text:
        results = [evaluate(part, status_of) for part in text.split(";") if part.strip()]
        if results:
            return min(results, key=lambda r: RANK[r[0]])
    if is_known_spelling(text):
        lic = canonical(text)
        return status_of(lic), lic or "UNKNOWN"
    tokens = [t.strip() for t in _TOKEN.findall(text) if t.strip()]
    if not tokens:
        return status_of(None), "UNKNOWN"
    pos = 0

    def term():
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError("expression ends early")
        tok = tokens[pos]
        pos += 1
        if tok == "(":
            result = disjunction()
            if pos >= len(tokens) or tokens[pos] != ")":
                raise ValueError("missing ')'")
            pos += 1
            return result
        if tok in (")", "AND", "OR", "WITH"):
            raise ValueError("unexpected %r" % tok)
        lic = canonical(tok)
        if pos < len(tokens) and tokens[pos] == "WITH":
            pos += 2  # an exception clause (e.g. Classpath-exception-2.0) keeps the base licence
        return status_of(lic), lic or "UNKNOWN"

    def conjunction():
        nonlocal pos
        best = term()
        while pos < len(tokens) and tokens[pos] == "AND":
            pos += 1
            nxt = term()
            if RANK[nxt[0]] > RANK[best[0]]:
                best = nxt
        return best

    def disjunction():
        nonlocal pos
        best = conjunction()
        while pos < len(tokens) and tokens[pos] == "OR":
            pos += 1
            nxt = conjunction()
            if RANK[nxt[0]] < RANK[best[0]]:
                best = nxt
        return best

    try:
        result = disjunction()
        if pos != len(tokens):
            raise ValueError("trailing %r" % tokens[pos])
    except ValueError:
        lic = canonical(raw)
        return status_of(lic), lic or "UNKNOWN"
    return result
