"""The security pattern set of the ``security`` metric and redaction.

``graders/data/security_patterns.yaml`` is the shipped set; ``load_patterns(path)``
reads another file of the same shape. The schema and its validation are shared with
the static content scan (``aces_bench/inputs/security_patterns.py``); here the set is
compiled once and grouped by trajectory scope; the security metric and redaction
both read the compiled set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from aces_bench.inputs.security_patterns import (
    TRAJECTORY_SCOPES,
    PatternFile,
    SecurityPattern,
    read_pattern_file,
)

DEFAULT_PATTERNS_FILE = Path(__file__).resolve().parent / "data" / "security_patterns.yaml"


@dataclass(frozen=True, slots=True)
class Compiled:
    spec: SecurityPattern
    rx: re.Pattern[str] | None
    ignore: re.Pattern[str] | None
    weight: float
    prefilter: tuple[str, ...] = ()

    def may_match(self, lowered: str) -> bool:
        """False when the text (lowercased) holds none of the prefilter literals."""
        return not self.prefilter or any(lit in lowered for lit in self.prefilter)

    @property
    def id(self) -> str:
        return self.spec.id


@dataclass(frozen=True, slots=True)
class PatternSet:
    """Compiled patterns grouped by scope, ready to scan."""

    source: str
    patterns: tuple[Compiled, ...]
    by_scope: dict[str, tuple[Compiled, ...]]
    categories: tuple[str, ...]
    secrets: tuple[Compiled, ...]
    gate: re.Pattern[str]

    def candidates(self, patterns: tuple[Compiled, ...], text: str) -> list[Compiled]:
        """The patterns worth running on ``text``: one C-level scan for every prefilter
        literal first, so a text holding none of them skips all prefiltered patterns."""
        lowered = text.lower()
        if self.gate.search(lowered) is None:
            return [c for c in patterns if not c.prefilter]
        return [c for c in patterns if c.may_match(lowered)]

    def get(self, pattern_id: str) -> Compiled:
        for p in self.patterns:
            if p.id == pattern_id:
                return p
        raise KeyError(pattern_id)


def _compile(pf: PatternFile, source: str) -> PatternSet:
    compiled = []
    weights = pf.severity_weights or {}
    for p in pf.patterns:
        compiled.append(Compiled(
            spec=p,
            rx=re.compile(p.regex, p.regex_flags()) if p.regex else None,
            ignore=re.compile(p.ignore_values, re.IGNORECASE) if p.ignore_values else None,
            weight=weights[p.severity],
            prefilter=tuple(p.prefilter),
        ))
    by_scope: dict[str, tuple[Compiled, ...]] = {}
    for scope in TRAJECTORY_SCOPES:
        by_scope[scope] = tuple(c for c in compiled if scope in c.spec.scopes)
    cats = tuple(dict.fromkeys(c.spec.category for c in compiled))
    secrets = tuple(c for c in compiled if c.spec.category == "secret" and c.rx is not None)
    literals = sorted({lit for c in compiled for lit in c.prefilter}, key=len, reverse=True)
    gate = re.compile("|".join(map(re.escape, literals)) if literals else r"(?!)")
    return PatternSet(source, tuple(compiled), by_scope, cats, secrets, gate)


def load_patterns(path: Path | str | None = None) -> PatternSet:
    """Read and compile a pattern file; the shipped set when ``path`` is None."""
    return _load_cached(str(Path(path).resolve()) if path else str(DEFAULT_PATTERNS_FILE))


@lru_cache(maxsize=8)
def _load_cached(path: str) -> PatternSet:
    pf = read_pattern_file(
        Path(path),
        scopes=TRAJECTORY_SCOPES,
        weights=True,
        fix="point grading.security_patterns at a YAML file shaped like graders/data/security_patterns.yaml",
    )
    return _compile(pf, path)


__all__ = ["DEFAULT_PATTERNS_FILE", "Compiled", "PatternSet", "SecurityPattern", "load_patterns"]
