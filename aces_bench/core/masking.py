"""Mask the values of the credentials passed to a trial, wherever and however they appear.

One function for every writer (the reference agent's ATIF, the graded record, the
report pages): each value is replaced by ``[REDACTED:credential NAME]``, also inside
other text (``postgres://app:VALUE@db``) and in the spellings a script commonly prints
it in: URL-quoted, JSON-escaped and base64 (standard and URL-safe). A value encoded any
other way (rot13, split in two) is not recognised: masking is a safeguard for honest
output, not a boundary against a skill that wants to exfiltrate.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping
from urllib.parse import quote, quote_plus


def credential_mask(name: str) -> str:
    return f"[REDACTED:credential {name}]"


def credential_values(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The values of the credentials ``names`` in ``environ`` (the host's by default), set ones only."""
    env = os.environ if environ is None else environ
    return {n: env[n] for n in names if env.get(n)}


def spellings(value: str) -> list[str]:
    """``value`` and the encodings of it a script commonly prints, longest first, distinct."""
    raw = value.encode("utf-8")
    forms = [value, quote(value, safe=""), quote_plus(value), json.dumps(value, ensure_ascii=True)[1:-1],
             json.dumps(value, ensure_ascii=False)[1:-1]]
    if len(value) >= 6:  # a base64 of a very short value is too short to be told from any text
        forms += [base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("=")]
    return sorted({f for f in forms if f}, key=lambda f: (-len(f), f))


def mask_known(text: str, values: Mapping[str, str]) -> str:
    """``text`` with every spelling of every value masked by its name (longer first, so one
    value inside another leaves nothing behind)."""
    if not text or not values:
        return text
    pairs = sorted(((form, name) for name, value in values.items() if value for form in spellings(value)),
                   key=lambda p: -len(p[0]))
    for form, name in pairs:
        if form in text:
            text = text.replace(form, credential_mask(name))
    return text
