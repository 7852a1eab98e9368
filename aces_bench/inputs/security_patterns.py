"""One schema and loader for security pattern files.

Two pattern sets share it: ``graders/data/security_patterns.yaml`` (the ``security``
metric and redaction, over what an agent did) and ``aces_bench/static/patterns.yaml``
(the static content scan, over a skill's files). Both are validated here the same
way (unique ids, regexes and ignore expressions that compile, lowercase prefilter
literals, known scopes and builtins); each consumer compiles the validated set into
its own runtime form.

Pattern keys:
  id, category, severity, description, fix    what is cited in evidence and reports
  scopes       where it applies: trajectory scopes (command, response, tool_output,
               written, artifact, read_path, write_path) or ``skill_file``
  kind         regex (default) | unicode (code point ``ranges``) | file (raised by the
               loader for symlinks, binaries...) | builtin (implemented in code; ``builtin``)
  regex, flags (IGNORECASE, MULTILINE, DOTALL)
  prefilter    lowercase literals of which one must occur before the regex runs
  value_groups regex groups holding the secret value (redaction masks these)
  ignore_values a case-insensitive regex: a match (or its value group, or the match
               plus ``context_after`` characters) it finds is a placeholder
  unless       another pattern id: a match inside one of its matches is not reported
  search       line (default: only lines holding a prefilter literal) | text
  value_check  secret_like: keep a match only when its 'value' group looks like a real
               secret (length, character classes, entropy) and its 'key' group does not
               name a path, URL, variable or count
  report       false: a signal (e.g. "this file talks to the network") that builtins
               combine with other findings, never reported by itself
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aces_bench.core.errors import ConfigError, from_validation
from aces_bench.core.io import load_yaml

SCHEMA_VERSIONS = ("1", "2")  # 1: the graders' file before the merge (a subset of 2)
TrajectoryScope = Literal[
    "command", "response", "tool_output", "written", "artifact", "read_path", "write_path"
]
Scope = Literal[
    "command",
    "response",
    "tool_output",
    "written",
    "artifact",
    "read_path",
    "write_path",
    "skill_file",
]
TRAJECTORY_SCOPES: tuple[str, ...] = TrajectoryScope.__args__  # type: ignore[attr-defined]
Severity = Literal["critical", "high", "medium", "low"]
BUILTINS = ("write_outside_workspace", "credential_harvest", "env_harvest")
FLAGS = {"IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE, "DOTALL": re.DOTALL}


class SecurityPattern(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^(?:S\d{3}|[a-z][a-z0-9_]*\.[a-z0-9_.]+)$")
    category: str
    severity: Severity
    scopes: list[Scope] = Field(min_length=1)
    description: str
    fix: str = ""
    kind: Literal["regex", "unicode", "file", "builtin"] = "regex"
    regex: str | None = None
    flags: list[Literal["IGNORECASE", "MULTILINE", "DOTALL"]] = Field(default_factory=list)
    value_groups: list[str] = Field(default_factory=list)
    ignore_values: str | None = None
    context_after: int = Field(default=0, ge=0)
    prefilter: list[str] = Field(default_factory=list)
    builtin: str | None = None
    unless: str | None = None
    search: Literal["line", "text"] = "line"
    value_check: Literal["secret_like"] | None = Field(
        default=None,
        description="a code check on the 'value' group (and 'key' group) after the regex: "
        "secret_like keeps values with the length, character mix and entropy of a real secret",
    )
    report: bool = Field(
        default=True, description="false: a signal builtins read, never a finding by itself"
    )
    ranges: list[tuple[int, int]] = Field(default_factory=list)
    allow_emoji_joiner: bool = Field(
        default=False, description="a lone U+200D after a symbol joins emoji; not a finding"
    )

    @model_validator(mode="before")
    @classmethod
    def _kind_from_builtin(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("builtin") and "kind" not in data:
            return {**data, "kind": "builtin"}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> SecurityPattern:
        need = {"regex": "regex", "builtin": "builtin", "unicode": "ranges"}.get(self.kind)
        given = {"regex": self.regex, "builtin": self.builtin, "ranges": self.ranges or None}
        extra = [k for k, v in given.items() if v is not None and k != need]
        if need is not None and given[need] is None:
            raise ValueError(f"pattern {self.id!r}: kind {self.kind} needs '{need}'")
        if extra:
            raise ValueError(f"pattern {self.id!r}: kind {self.kind} takes no {', '.join(extra)}")
        if any(lit != lit.lower() or not lit for lit in self.prefilter):
            raise ValueError(f"pattern {self.id!r}: prefilter literals must be non-empty and lowercase")
        if self.builtin is not None and self.builtin not in BUILTINS:
            raise ValueError(f"pattern {self.id!r}: unknown builtin {self.builtin!r} (valid: {', '.join(BUILTINS)})")
        # Compiled with the flags they run with, so a consumer's own re.compile of the
        # same pattern is answered from re's cache instead of compiling it again.
        for label, rx, flags in (("regex", self.regex, self.regex_flags()),
                                 ("ignore_values", self.ignore_values, re.IGNORECASE)):
            if rx is None:
                continue
            try:
                compiled = re.compile(rx, flags)
            except re.error as exc:
                raise ValueError(f"pattern {self.id!r}: {label} does not compile: {exc}") from None
            if label == "regex":
                if self.value_check is not None and "value" not in compiled.groupindex:
                    raise ValueError(f"pattern {self.id!r}: value_check needs a (?P<value>...) group in the regex")
                missing = [g for g in self.value_groups if g not in compiled.groupindex]
                if missing:
                    raise ValueError(f"pattern {self.id!r}: value_groups {missing} are not groups of the regex")
        return self

    def regex_flags(self) -> int:
        out = 0
        for f in self.flags:
            out |= FLAGS[f]
        return out


class PatternFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal["1", "2"] = "2"
    severity_weights: dict[Severity, float] | None = Field(
        default=None, description="score weight per severity (the security metric's file needs them)"
    )
    patterns: list[SecurityPattern] = Field(min_length=1)

    @model_validator(mode="after")
    def _checks(self) -> PatternFile:
        if self.severity_weights is not None:
            missing = {"critical", "high", "medium", "low"} - set(self.severity_weights)
            if missing:
                raise ValueError(f"severity_weights: missing weights for {sorted(missing)}")
            if any(not 0 <= w <= 1 for w in self.severity_weights.values()):
                raise ValueError("severity_weights: weights must be between 0 and 1")
        seen: set[str] = set()
        for p in self.patterns:
            if p.id in seen:
                raise ValueError(f"pattern id {p.id!r} is used twice")
            seen.add(p.id)
        ids = {p.id for p in self.patterns}
        for p in self.patterns:
            if p.unless is not None and p.unless not in ids:
                raise ValueError(f"pattern {p.id!r}: unless names unknown pattern {p.unless!r}")
        return self


def read_pattern_file(
    path: Path,
    *,
    scopes: tuple[str, ...],
    weights: bool = False,
    fix: str = "correct the listed pattern keys",
) -> PatternFile:
    """Read and validate a pattern file whose patterns may use only ``scopes``.

    Every problem is a ConfigError naming the file, the key and the fix.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError("security pattern file does not exist", where=p, fix=fix)
    try:
        raw = load_yaml(p.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read security patterns: {exc}", where=p, fix="fix the YAML syntax") from None
    try:
        pf = PatternFile.model_validate(raw)
    except ValidationError as err:
        raise from_validation(err, cls=ConfigError, where=p, fix=fix) from None
    if weights and pf.severity_weights is None:
        raise ConfigError("severity_weights is missing", where=p, fix="add severity_weights: {critical: 1.0, high: 0.5, medium: 0.25, low: 0.1}")
    for sp in pf.patterns:
        wrong = [s for s in sp.scopes if s not in scopes]
        if wrong:
            raise ConfigError(
                f"pattern {sp.id!r} has scope(s) {wrong} this pattern set does not scan",
                where=p,
                fix=f"use scopes from: {', '.join(scopes)}",
            )
    return pf
