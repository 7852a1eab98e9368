"""The Tier 1 rule catalog, loaded once from ``rules.yaml`` and validated."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from aces_bench.core.errors import ConfigError, from_validation
from aces_bench.core.io import load_yaml

Dimension = Literal["correctness", "discoverability", "reliability", "efficiency"]
Severity = Literal["critical", "high", "medium", "low", "info"]
DIMENSIONS: tuple[Dimension, ...] = (
    "correctness",
    "discoverability",
    "reliability",
    "efficiency",
)
SEVERITY_ORDER: tuple[Severity, ...] = ("critical", "high", "medium", "low", "info")
RULES_FILE = Path(__file__).with_name("rules.yaml")
# Rule profiles: this project's own catalog, and SkillEvaluator 0.2.0's Tier 1 quality
# score reproduced rule by rule (the ACES paper's scan).
PROFILES: dict[str, Path] = {
    "aces": RULES_FILE,
    "skillevaluator": Path(__file__).with_name("rules_skillevaluator.yaml"),
}
DEFAULT_PROFILE = "aces"


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^(SE-)?[CDRE]\d{3}$")
    name: str
    dimension: Dimension
    severity: Severity
    deduction: float | None = Field(
        default=None, ge=0, description="overrides the severity's points"
    )
    max_hits: int = Field(
        default=1,
        ge=1,
        description="findings of this rule counted towards the deduction",
    )
    needs: Literal["skill_md", "scripts"] = "skill_md"
    contract: str | None = None
    paper_label: str | None = None
    title: str
    rationale: str
    fix: str


class Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: str
    profile: str = DEFAULT_PROFILE
    dimensions: dict[Dimension, float]
    severity_points: dict[Severity, float]
    grades: dict[str, float]
    default_gate: float
    score_decimals: int = Field(
        default=2, ge=0, description="decimals the overall score is rounded to"
    )
    contract: dict[str, list[str]]
    rules: list[Rule]

    @model_validator(mode="after")
    def _consistent(self) -> Catalog:
        if abs(sum(self.dimensions.values()) - 1.0) > 1e-9:
            raise ValueError(
                f"dimension weights must sum to 1, got {sum(self.dimensions.values())}"
            )
        ids = [r.id for r in self.rules]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate rule ids: {dupes}")
        for r in self.rules:
            if r.contract is not None and r.contract not in self.contract:
                raise ValueError(
                    f"rule {r.id} names unknown contract field {r.contract!r}"
                )
        return self

    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}

    def deduction(self, rule: Rule) -> float:
        """Points one finding of ``rule`` takes off its dimension."""
        return (
            rule.deduction
            if rule.deduction is not None
            else self.severity_points[rule.severity]
        )


def load_catalog(path: Path) -> Catalog:
    """Read and validate a rule catalog file; errors name the file and the key."""
    try:
        raw = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"cannot read rule catalog: {exc}",
            where=path,
            fix="restore rules.yaml from the package",
        ) from None
    try:
        return Catalog.model_validate(raw)
    except ValidationError as exc:
        raise from_validation(
            exc, where=path, fix="correct the listed keys in the rule catalog"
        ) from None


def rules_file(profile: str = DEFAULT_PROFILE) -> Path:
    """The catalog file of a rule profile; an unknown name lists the valid ones."""
    try:
        return PROFILES[profile]
    except KeyError:
        raise ConfigError(
            f"unknown rule profile {profile!r}",
            where="--profile",
            fix=f"choose one of: {', '.join(PROFILES)}",
        ) from None


@cache
def catalog(profile: str = DEFAULT_PROFILE) -> Catalog:
    """The packaged catalog of a rule profile, parsed once per process."""
    return load_catalog(rules_file(profile))
