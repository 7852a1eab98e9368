"""On-disk records of a scan: findings, per-skill results and the corpus summary.

Every record carries ``schema_version``. A skill that could not be scored has
``status="error"`` and ``score=None``: unscored is never 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from aces_bench.core.versioning import VersionedRecord, read_record
from aces_bench.static.catalog import Dimension, Severity

SCAN_SCHEMA_VERSION = "1"
SCAN_REGENERATE = "re-run the scan (`aces-bench scan`)"

TOKEN_METHOD = (
    "approx-chars/4: tokens = ceil(characters / 4), cross-checked with words x 4/3 "
    "(both reported); offline, no tokenizer vocabulary is downloaded"
)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Versioned(VersionedRecord):
    """A record written as its own JSON file: versioned, migrated on read."""

    model_config = ConfigDict(extra="forbid")
    SCHEMA_ARTIFACT: ClassVar[str] = "static scan record"
    SCHEMA_VERSION: ClassVar[str] = SCAN_SCHEMA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = SCAN_REGENERATE


class Finding(_Record):
    """One Tier 1 rule violation: where it is and how to fix it."""

    rule_id: str
    rule_name: str
    dimension: Dimension
    severity: Severity
    file: str = Field(description="path relative to the skill folder")
    line: int | None = None
    message: str
    fix: str


class SecurityFinding(_Record):
    pattern_id: str
    category: str
    severity: Severity
    file: str
    line: int | None = None
    column: int | None = None
    message: str
    excerpt: str = Field(
        default="", description="the matched text, shortened; secrets are masked"
    )
    decoded: str | None = Field(
        default=None, description="hidden text decoded from Unicode tag characters"
    )
    fix: str


class LintFinding(_Record):
    tool: Literal["ruff", "shellcheck"]
    code: str
    file: str
    line: int | None = None
    message: str


class ToolRun(_Record):
    tool: str
    status: Literal["ran", "not_run", "failed"]
    detail: str = ""


class DimensionScore(_Record):
    dimension: Dimension
    weight: float
    score: float
    deduction: float
    findings: int


class TokenCount(_Record):
    method: str = TOKEN_METHOD
    skill_md: int
    skill_md_words_estimate: int
    all_text: int


class RubricCriterion(_Record):
    criterion: str
    score: int = Field(ge=0, le=10)
    reason: str


class RubricResult(_Record):
    """Tier 2 for one skill and one judge. ``status != "ok"`` means no scores, never zeros."""

    status: Literal["ok", "error", "not_run"]
    judge: str | None = None
    prompt_id: str = "static-rubric"
    prompt_version: str
    criteria: list[RubricCriterion] = Field(default_factory=list)
    score: float | None = Field(
        default=None, description="mean criterion score x 10 (0-100)"
    )
    detail: str = ""


class SkillResult(_Versioned):
    SCHEMA_ARTIFACT: ClassVar[str] = "static scan skill result"

    skill: str = Field(description="frontmatter name, else the folder name")
    skill_id: str = Field(
        description="path relative to the scanned root; unique within a corpus"
    )
    source: str
    path: str
    status: Literal["ok", "error"]
    error: str | None = None
    content_hash: str | None = None
    score: float | None = None
    grade: str | None = None
    passed_gate: bool | None = None
    gate_reasons: list[str] = Field(default_factory=list)
    dimensions: list[DimensionScore] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    not_evaluable: dict[str, str] = Field(
        default_factory=dict, description="rule id -> why it could not be checked"
    )
    security: list[SecurityFinding] = Field(default_factory=list)
    lint: list[LintFinding] = Field(default_factory=list)
    tools: list[ToolRun] = Field(default_factory=list)
    tokens: TokenCount | None = None
    frontmatter_declared: dict[str, bool] = Field(
        default_factory=dict, description="contract field -> declared under any alias"
    )
    frontmatter_top_level: dict[str, bool] = Field(
        default_factory=dict,
        description="contract field -> declared as a top-level key of that name",
    )
    files_present: int = 0
    files_readable: int = 0
    rubric: list[RubricResult] = Field(default_factory=list)


class ScoreStats(_Record):
    n: int
    mean: float | None
    median: float | None
    sd: float | None
    min: float | None
    max: float | None
    share_at_or_above_70: float | None
    share_at_or_above_80: float | None
    share_passing_gate: float | None


class RuleShare(_Record):
    rule_id: str
    rule_name: str
    title: str
    dimension: Dimension
    skills: int
    share: float


class CorpusResult(_Versioned):
    SCHEMA_ARTIFACT: ClassVar[str] = "static scan corpus result"

    roots: list[str]
    gate: float
    strict: bool
    profile: str = "aces"
    n_skills: int
    n_errors: int
    stats: ScoreStats
    dimension_means: dict[str, float | None]
    grade_counts: dict[str, int]
    top_violations: list[RuleShare]
    rule_shares: list[RuleShare]
    contract_missing_share: dict[str, float]
    contract_missing_top_level_share: dict[str, float]
    not_evaluable_skills: dict[str, int]
    security_counts: dict[str, int]
    by_source: list[dict[str, Any]]
    errors: list[dict[str, str]]
    token_method: str = TOKEN_METHOD
    comparison: dict[str, Any] | None = None
    rubric_summary: dict[str, Any] | None = None
    static_vs_live: dict[str, Any] | None = None
    skillevaluator_agreement: dict[str, Any] | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)


def _read[R: _Versioned](model: type[R], path: Path) -> R:
    return read_record(model, path, what="scan result", regenerate=SCAN_REGENERATE)


def read_skill_result(path: Path) -> SkillResult:
    """A scan's ``skills/<id>.json``, validated (and migrated); a bad or newer file is a ReportError."""
    return _read(SkillResult, path)


def read_corpus_result(path: Path) -> CorpusResult:
    """A scan's ``corpus.json``, validated (and migrated); a bad or newer file is a ReportError."""
    return _read(CorpusResult, path)
