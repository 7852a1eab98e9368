"""The security pattern set: one data file with ids, categories and severities.

``graders/data/security_patterns.yaml`` is the shipped set; ``load_patterns(path)``
reads another file of the same shape. The set is validated once (unique ids,
regexes that compile, known scopes and builtins) and compiled once; the security
metric and redaction both read the compiled set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from aces_bench.errors import ConfigError, from_validation

DEFAULT_PATTERNS_FILE = Path(__file__).resolve().parent / "data" / "security_patterns.yaml"
PATTERNS_SCHEMA_VERSION = "1"
Scope = Literal["command", "response", "tool_output", "written", "artifact", "read_path", "write_path"]
Severity = Literal["critical", "high", "medium", "low"]
BUILTINS = ("write_outside_workspace",)
_FLAGS = {"IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE, "DOTALL": re.DOTALL}


class SecurityPattern(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*\.[a-z0-9_.]+$")
    category: str
    severity: Severity
    scopes: list[Scope] = Field(min_length=1)
    description: str
    regex: str | None = None
    flags: list[Literal["IGNORECASE", "MULTILINE", "DOTALL"]] = Field(default_factory=list)
    value_groups: list[str] = Field(default_factory=list)
    ignore_values: str | None = None
    prefilter: list[str] = Field(default_factory=list)
    builtin: str | None = None

    @model_validator(mode="after")
    def _regex_or_builtin(self) -> SecurityPattern:
        if (self.regex is None) == (self.builtin is None):
            raise ValueError(f"pattern {self.id!r}: give exactly one of 'regex' or 'builtin'")
        if any(lit != lit.lower() or not lit for lit in self.prefilter):
            raise ValueError(f"pattern {self.id!r}: prefilter literals must be non-empty and lowercase")
        if self.builtin is not None and self.builtin not in BUILTINS:
            raise ValueError(f"pattern {self.id!r}: unknown builtin {self.builtin!r} (valid: {', '.join(BUILTINS)})")
        for label, rx in (("regex", self.regex), ("ignore_values", self.ignore_values)):
            if rx is None:
                continue
            try:
                compiled = re.compile(rx)
            except re.error as exc:
                raise ValueError(f"pattern {self.id!r}: {label} does not compile: {exc}") from None
            if label == "regex":
                missing = [g for g in self.value_groups if g not in compiled.groupindex]
                if missing:
                    raise ValueError(f"pattern {self.id!r}: value_groups {missing} are not groups of the regex")
        return self


class PatternFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str = PATTERNS_SCHEMA_VERSION
    severity_weights: dict[Severity, float]
    patterns: list[SecurityPattern] = Field(min_length=1)

    @field_validator("severity_weights")
    @classmethod
    def _weights(cls, v: dict[str, float]) -> dict[str, float]:
        missing = {"critical", "high", "medium", "low"} - set(v)
        if missing:
            raise ValueError(f"missing weights for {sorted(missing)}")
        if any(not 0 <= w <= 1 for w in v.values()):
            raise ValueError("weights must be between 0 and 1")
        return v

    @model_validator(mode="after")
    def _unique(self) -> PatternFile:
        seen: set[str] = set()
        for p in self.patterns:
            if p.id in seen:
                raise ValueError(f"pattern id {p.id!r} is used twice")
            seen.add(p.id)
        return self


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
    for p in pf.patterns:
        flags = 0
        for f in p.flags:
            flags |= _FLAGS[f]
        compiled.append(Compiled(
            spec=p,
            rx=re.compile(p.regex, flags) if p.regex else None,
            ignore=re.compile(p.ignore_values, re.IGNORECASE) if p.ignore_values else None,
            weight=pf.severity_weights[p.severity],
            prefilter=tuple(p.prefilter),
        ))
    by_scope: dict[str, tuple[Compiled, ...]] = {}
    for scope in Scope.__args__:  # type: ignore[attr-defined]
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
    p = Path(path)
    if not p.is_file():
        raise ConfigError("security pattern file does not exist", where=p,
                          fix="point grading.security_patterns at a YAML file shaped like graders/data/security_patterns.yaml")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}", where=p, fix="fix the YAML syntax") from None
    try:
        pf = PatternFile.model_validate(raw)
    except ValidationError as err:
        raise from_validation(err, cls=ConfigError, where=p, fix="correct the listed pattern keys") from None
    return _compile(pf, str(p))
