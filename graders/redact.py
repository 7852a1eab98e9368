"""Mask secret-like strings in everything graders and reports write.

The secret patterns of the security pattern set (category ``secret``) decide what
is secret, so detection and masking never disagree. A match becomes
``[REDACTED:<pattern id>]``; for assignment patterns only the value is masked
(``password="[REDACTED:secret.assignment]"``) so the evidence still says what
leaked. The raw trajectory in Harbor's job dir is never touched: redaction applies
to copies the graders and reports write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from aces_bench.core.masking import credential_mask, mask_known  # noqa: F401  (credential_mask re-exported)
from aces_bench.graders.patterns import Compiled, PatternSet, load_patterns


def mask(pattern_id: str) -> str:
    return f"[REDACTED:{pattern_id}]"


def _span(c: Compiled, m: re.Match[str]) -> tuple[int, int] | None:
    """The span to mask, or None when the value is a placeholder."""
    for g in c.spec.value_groups:
        if m.group(g) is not None:
            if c.ignore is not None and c.ignore.search(m.group(g)):
                return None
            return m.span(g)
    if c.ignore is not None and c.ignore.search(m.group(0)):
        return None
    return m.span()


def secret_matches(text: str, patterns: PatternSet | None = None) -> list[tuple[Compiled, re.Match[str], tuple[int, int]]]:
    """Every secret pattern match in ``text``: (pattern, match, span to mask)."""
    ps = patterns or load_patterns()
    out = []
    for c in ps.candidates(ps.secrets, text):
        for m in c.rx.finditer(text):  # type: ignore[union-attr]
            span = _span(c, m)
            if span is not None:
                out.append((c, m, span))
    return out


def redact(text: str, patterns: PatternSet | None = None) -> str:
    """``text`` with every secret-like substring masked; unchanged when none."""
    if not text:
        return text
    found = secret_matches(text, patterns)
    if not found:
        return text
    # Overlapping matches (a key inside an assignment): mask the union, left to right,
    # labelled by the most specific pattern (earlier in the file) starting there.
    order = {c.id: i for i, c in enumerate((patterns or load_patterns()).secrets)}
    spans = [(s, e, pid) for s, _, e, pid in sorted((s, order[c.id], e, c.id) for c, _, (s, e) in found)]
    out: list[str] = []
    pos = 0
    for s, e, pid in spans:
        if e <= pos:
            continue
        s = max(s, pos)
        out.append(text[pos:s])
        out.append(mask(pid))
        pos = e
    out.append(text[pos:])
    return "".join(out)


def redact_value(obj: Any, patterns: PatternSet | None = None) -> Any:
    """Redact every string inside a JSON-like value (dicts, lists, models); keys too."""
    ps = patterns or load_patterns()
    if isinstance(obj, str):
        return redact(obj, ps)
    if isinstance(obj, BaseModel):
        return type(obj).model_validate(redact_value(obj.model_dump(mode="python"), ps))
    if isinstance(obj, dict):
        return {redact_value(k, ps) if isinstance(k, str) else k: redact_value(v, ps) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact_value(v, ps) for v in obj)
    return obj


def snippet(text: str, start: int, end: int, *, width: int = 60, patterns: PatternSet | None = None) -> str:
    """A redacted, single-line excerpt around ``text[start:end]``.

    The window is widened to whitespace so no secret is cut in half at its edge
    (a half secret would escape the patterns and leak).
    """
    lo = max(0, start - width)
    hi = min(len(text), end + width)
    while lo > 0 and not text[lo - 1].isspace() and start - lo < width + 200:
        lo -= 1
    while hi < len(text) and not text[hi].isspace() and hi - end < width + 200:
        hi += 1
    piece = redact(text[lo:hi], patterns)
    piece = " ".join(piece.split())
    return ("…" if lo > 0 else "") + piece + ("…" if hi < len(text) else "")


def redact_known(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every passed credential's value masked by name (``aces_bench.core.masking``),
    inside other text too (``postgres://u:VALUE@h``) and URL-quoted, JSON-escaped or base64."""
    return mask_known(text, values)


def redact_known_value(obj: Any, values: Mapping[str, str]) -> Any:
    """``redact_known`` over every string inside a JSON-like value (dicts, lists, models); keys too."""
    if not values:
        return obj
    if isinstance(obj, str):
        return redact_known(obj, values)
    if isinstance(obj, BaseModel):
        return type(obj).model_validate(redact_known_value(obj.model_dump(mode="python"), values))
    if isinstance(obj, dict):
        return {redact_known_value(k, values): redact_known_value(v, values) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(redact_known_value(v, values) for v in obj)
    return obj
