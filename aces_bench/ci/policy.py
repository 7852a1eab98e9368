"""The promotion policy (YAML) and its verdict: pass or fail, with one reason per check.

```yaml
gate:                               # always checked, first run included (docs/gate.md)
  threshold: 0.0                    # pass-rate lift each skill must credibly exceed
  min_cases: 5                      # distinct cases won by more than the threshold
  alpha: 0.05                       # one-sided level of the test
  harm_alpha: 0.2                   # one-sided level of the harm tests (should-not-use cases)
  null_alpha: 0.05                  # two-sided level of the null arm's test
  family: holm                      # Holm across the skills run; none: each skill at alpha (unadjusted)
min_outcome_lift_lower_bound: 0.0   # the gate at this threshold (at least gate.threshold), same family
max_security_findings: 0            # runtime security findings in with-skill trials
null_arm: require_no_effect         # or "ignore"; run the null arm; it must be consistent with 0
no_regression: true                 # no skill significantly worse than the last good run (paired CI)
min_pass_rate: 0.5                  # each skill's with-skill pass rate (final_pass, failures counted)
```
A key left out is not checked (the gate always is, at its defaults). A check whose
input is missing says so ("not run").
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aces_bench.core.errors import ConfigError
from aces_bench.core.gate import GateSettings
from aces_bench.core.io import load_yaml, yaml_problem


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    gate: GateSettings = Field(default_factory=GateSettings)
    """The gate's settings, the study's ``study.gate`` model itself (``core.gate``): one
    declaration, so a key the study's gate takes is the policy's too, with the same default."""
    min_outcome_lift_lower_bound: float | None = Field(default=None, gt=-1, lt=1)
    max_security_findings: int | None = Field(default=None, ge=0)
    null_arm: Literal["require_no_effect", "ignore"] = "ignore"
    no_regression: bool = True
    min_pass_rate: float | None = Field(default=None, ge=0, le=1)


class Check(BaseModel):
    name: str
    status: Literal["pass", "fail", "not run"]
    reason: str


class Verdict(BaseModel):
    passed: bool
    checks: list[Check]

    def reasons(self) -> list[str]:
        return [f"{c.status}: {c.name}: {c.reason}" for c in self.checks]


def load_policy(path: Path | None) -> Policy:
    if path is None:
        return Policy()
    try:
        raw = load_yaml(Path(path).read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read the policy: {exc.strerror}", where=path, fix="check the path") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"the policy is not valid YAML: {yaml_problem(exc)}", where=path, fix="pass a YAML mapping (see docs/ci.md)") from None
    if not isinstance(raw, dict):
        raise ConfigError("the policy is not a YAML mapping", where=path, fix="write key: value lines (see docs/ci.md)")
    try:
        return Policy.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "policy"
        valid = ", ".join(Policy.model_fields)
        raise ConfigError(f"policy key {key}: {first['msg']}", where=path, fix=f"valid keys: {valid}") from None


def verdict(checks: list[Check]) -> Verdict:
    return Verdict(passed=all(c.status != "fail" for c in checks), checks=checks)
