"""The run spec: the composed Hydra config, validated once, frozen.

Past ``build_run_spec`` no code reads a DictConfig. Validation errors are reported as
dotted keys (``workspace.mode``) a user can type back as Hydra overrides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from harbor.models.agent.name import AgentName
from harbor.models.environment_type import EnvironmentType
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import InterpolationValidationError, MissingMandatoryValue, OmegaConfBaseException
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from aces_bench.agents.profiles import WireApi
from aces_bench.backends import BACKENDS, LOCAL_BACKEND
from aces_bench.core.conditions import CONTROLS, Control
from aces_bench.core.errors import ConfigError, from_validation
from aces_bench.core.gate import GateSettings
from aces_bench.core.metrics import metric_names
from aces_bench.core.modes import MODE_NAMES
from aces_bench.core.pricing import DEFAULT_INPUT_TOKENS, DEFAULT_OUTPUT_TOKENS
from aces_bench.judges.spec import JudgeSpec

SPEC_SCHEMA_VERSION = "1"
_AGENTS = sorted(a.value for a in AgentName)
_ENVIRONMENTS = sorted(e.value for e in EnvironmentType)


class _Frozen(BaseModel):
    # A field's docstring is its description: the one place a setting is declared
    # (config.schema makes Hydra's structured config from these models).
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


SupportRole = Literal["prerequisite", "helper", "reference", "decoy"]
SUPPORT_ROLES: tuple[str, ...] = SupportRole.__args__  # type: ignore[attr-defined]
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"


class SupportSkill(_Frozen):
    """A non-target skill staged in both conditions, with the role it plays."""

    path: Path
    role: SupportRole = "helper"


class SkillSpec(_Frozen):
    paths: list[Path] = Field(min_length=1)
    """Skill folders, or folders holding skill folders."""
    support: list[SupportSkill] = Field(default_factory=list)
    """Non-target skills staged in both conditions: a path (role 'helper') or
    ``{path: ..., role: prerequisite|helper|reference|decoy}``."""
    cases: list[str] = Field(default_factory=list)
    """Only these case ids (empty: all)."""
    intervention: Literal["skill", "bundle", "plugin"] = "skill"
    """What is added or withheld: 'skill' (each target alone), 'bundle' (all targets
    together, named ``intervention_name``) or 'plugin' (each path is a plugin folder)."""
    intervention_name: str | None = Field(default=None, pattern=_NAME)
    harbor_tasks: bool = True
    """Pair the native Harbor tasks under each target's ``evals/harbor/<task>/``."""
    accept_drafts: bool = False
    """Run cases still marked ``status: draft`` (drafted by ``dataset create``, not yet reviewed)."""
    allow_credentials: list[str] = Field(default_factory=list)
    """Credential names cases may use although they look like operator credentials
    (``*_API_KEY``, ``AWS_*``, ...). Never process settings or the model's/judge's own."""
    evals_file: str | None = Field(default=None, pattern=r"^[^/\s][^\s]*$")
    """Read only this evals file of each skill (relative to the skill folder, e.g.
    ``evals/evals2.json``) instead of the folder's rule."""

    @field_validator("support", mode="before")
    @classmethod
    def _plain_paths(cls, v: Any) -> Any:
        # A plain path keeps working: it is a helper skill.
        if isinstance(v, list):
            return [{"path": e} if isinstance(e, str | Path) else e for e in v]
        return v

    @model_validator(mode="after")
    def _bundle_named(self) -> SkillSpec:
        if self.intervention == "bundle" and not self.intervention_name:
            raise ValueError(
                "skill.intervention is 'bundle' but skill.intervention_name is not set: "
                "add skill.intervention_name=<name the lift is attributed to>"
            )
        return self


class HarnessSpec(_Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    agent: str | None = None
    import_path: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    kwargs: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    requires_model: bool = True
    label: str = ""
    cli: str | None = None
    """An npm agent CLI (claude-code, codex, opencode) from ``aces-bench agents install``,
    mounted read-only into every trial."""
    bundled_skills: Literal["off", "keep"] = "off"
    """The skills the CLI ships with: ``off`` hides them from the model in both arms
    (the controlled default), ``keep`` leaves them listed."""

    @model_validator(mode="after")
    def _one_agent(self) -> HarnessSpec:
        if self.cli is not None:
            from aces_bench.agents.clis import CLIS

            if self.cli not in CLIS:
                raise ValueError(f"unknown agent CLI {self.cli!r}; valid: {', '.join(CLIS)}")
        if (self.agent is None) == (self.import_path is None):
            raise ValueError("set exactly one of 'agent' (a Harbor agent name) or 'import_path' (module:Class)")
        if self.agent is not None and self.agent not in _AGENTS:
            raise ValueError(f"unknown Harbor agent {self.agent!r}; valid: {', '.join(_AGENTS)}")
        return self

    @property
    def display(self) -> str:
        return self.label or self.name


class ModelSpec(_Frozen):
    name: str | None = None
    base_url: str | None = Field(default=None, pattern=r"^https?://[^\s]+$")
    """The endpoint's host, with or without ``/v1``; each harness calls its own API's path on it."""
    api_key_env: str | None = None
    label: str | None = None
    api: WireApi | None = None
    """The wire API the endpoint speaks when it is not the model's own (a translating
    gateway): ``anthropic``, ``openai-responses`` or ``openai-chat``."""
    version: str | None = None
    """The provider's version string of the model (a dated snapshot, say), when ``name`` does
    not pin one; part of the key under which baseline trials are reused."""

    @property
    def display(self) -> str:
        return self.label or self.name or "none"


class WorkspaceSpec(_Frozen):
    mode: Literal["isolation", "group"]
    workdir: str = Field(default="/workspace", pattern=r"^/[^\s]*$")
    skills_dir: str = Field(default="/skills", pattern=r"^/[^\s]*$")
    answer_file: str = Field(default="answer.txt", pattern=r"^[A-Za-z0-9_.-]+$")
    base_image: str = Field(default="python:3.12-slim", min_length=1)
    custom_environment: bool = True
    """Build on a target's ``evals/environment/`` (Dockerfile, Compose, MCP servers) when present."""
    network: Literal["no-network", "public"] = "no-network"
    cpus: int = Field(default=1, ge=1)
    memory_mb: int = Field(default=2048, ge=128)
    storage_mb: int | None = Field(default=None, ge=16)
    """Disk for the trial's own file system (Harbor's ``storage_mb``); None: no limit set."""
    agent_timeout_sec: float = Field(default=300.0, gt=0)
    verifier_timeout_sec: float = Field(default=60.0, gt=0)


class DecoySpec(_Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    paths: list[Path] = Field(default_factory=list)
    size: int | None = Field(default=None, ge=0)
    """How many decoys to draw from the pool (None: all of it)."""
    seed: int = 0
    """Seed of the draw: sizes drawn with one seed are nested (size 5 holds size 1's)."""


class GradingSpec(_Frozen):
    mode: str = "aces_default"
    metrics: list[str] = Field(default_factory=lambda: list(metric_names()))
    weights: dict[str, float] = Field(default_factory=dict)
    pass_threshold: float = Field(default=1.0, ge=0, le=1)

    @field_validator("mode")
    @classmethod
    def _known_mode(cls, v: str) -> str:
        if v not in MODE_NAMES:
            raise ValueError(f"Input should be one of {', '.join(repr(m) for m in MODE_NAMES)}")
        return v

    @field_validator("metrics")
    @classmethod
    def _registered(cls, names: list[str]) -> list[str]:
        known = metric_names()
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ValueError(f"unknown metric(s) {', '.join(map(repr, unknown))}; registered: {', '.join(known)}")
        return names

    @model_validator(mode="after")
    def _weights(self) -> GradingSpec:
        for k, w in self.weights.items():
            if k not in self.metrics:
                raise ValueError(f"weight for {k!r} but it is not among grading.metrics {self.metrics}")
            if w < 0:
                raise ValueError(f"weight for {k!r} is negative")
        return self

    def weight_of(self, metric: str) -> float:
        """Composite weight; equal (1/len(metrics)) unless configured."""
        if self.weights:
            return self.weights.get(metric, 0.0)
        return 1.0 / len(self.metrics) if metric in self.metrics else 0.0


class BackendSpec(_Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    type: str | None = None
    import_path: str | None = Field(default=None, pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    kwargs: dict[str, Any] = Field(default_factory=dict)
    delete: bool = True
    label: str = ""

    @model_validator(mode="after")
    def _one_env(self) -> BackendSpec:
        if (self.type is None) == (self.import_path is None):
            raise ValueError("set exactly one of 'type' (a Harbor environment type) or 'import_path' (module:Class)")
        if self.type is not None and self.type not in _ENVIRONMENTS:
            raise ValueError(f"unknown Harbor environment type {self.type!r}; valid: {', '.join(_ENVIRONMENTS)}")
        return self

    @property
    def display(self) -> str:
        return self.label or self.name

    @property
    def is_local(self) -> bool:
        """Trials run on this machine under the local-sandbox rules: backend=local (aces-bench's
        bubblewrap sandbox), or a plugin backend whose profile says so. The one test of it."""
        if self.import_path == LOCAL_BACKEND:
            return True
        if self.import_path is None or self.name not in BACKENDS:
            return False
        profile = BACKENDS.get(self.name)
        return profile.is_local and profile.import_path == self.import_path


class ArmSpec(_Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    grid: dict[str, list[str]] = Field(default_factory=dict)
    """Override key -> values; the arm's members are their Cartesian product."""
    overrides: list[str] = Field(default_factory=list)
    """Overrides every member of the arm gets (before the grid's)."""


class StudySpec(_Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = ""
    n_attempts: int = Field(default=1, ge=1)
    n_concurrent: int = Field(default=2, ge=1)
    seed: int = 0
    pass_threshold: float | None = None
    """Removed: pass is decided once, by grading.pass_threshold (setting it is an error; kept
    so provenance written before reads)."""
    max_infra_retries: int = Field(default=2, ge=0)
    """Reruns of a trial that failed for infrastructure before the agent started (or on a
    model provider error); a trial still failing after them is excluded and counted."""
    gate: GateSettings = Field(default_factory=GateSettings)
    """The gate's settings (``aces_bench.core.gate``)."""
    stop_on_pass: bool = False
    """Skip a case's later attempts once one passes (recorded as skipped)."""
    max_cost_usd: float | None = Field(default=None, ge=0)
    """Refuse to start above this estimated cost; stop once real usage crosses it (USD)."""
    max_output_gb: float | None = Field(default=20.0, gt=0)
    """The study folder's disk use (aces_bench.run.disk), checked before each round: sized for
    a laptop; null: no cap."""
    expected_input_tokens: int = Field(default=DEFAULT_INPUT_TOKENS, ge=0)
    """Per model-driven trial: the one token estimate behind the preview, the design's
    size, a sweep's total and the cost cap (``aces_bench.core.pricing``)."""
    expected_output_tokens: int = Field(default=DEFAULT_OUTPUT_TOKENS, ge=0)
    static_profile: Literal["aces", "skillevaluator"] = "aces"
    """Tier 1 rule profile of the report's static-vs-live scan: aces | skillevaluator (the
    ACES paper's study uses SkillEvaluator 0.2.0's score, as the paper reports it)."""
    paper_page: bool = False
    """Add the paper page (report/paper.html: the ACES paper's reported figures beside
    this study's) to the report; study=aces_paper sets it."""
    axes: dict[str, list[str]] = Field(default_factory=dict)
    """Named value lists that ``arms`` interpolate (``${study.axes.harnesses}``), so a
    user changes one list on the command line instead of an arm."""
    arms: list[ArmSpec] = Field(default_factory=list)
    """A designed study (e.g. study=aces_paper): the union of these grids, each member
    run as its own study under ``<output_dir>/<member>/`` and reported together."""
    harness_models: dict[str, str] = Field(default_factory=dict)
    """Model option per harness for members whose arm sets no model (empty: the
    ``model=`` of the command line for every harness)."""
    scan_tiers: list[Literal[1, 2]] = Field(default_factory=list)
    """Static scan tiers the design includes (1: structural, 2: LLM rubric)."""
    controls: tuple[Control, ...] = ()
    """Calibration arms run beside with_skill and baseline, in the same pairing:
    ``null`` (the baseline run again, analysed as the treatment), ``placebo`` (a sham
    skill with the target's name and description) and ``forced`` (the target's SKILL.md
    in the instruction). Default: none."""
    sequential: bool = False
    """Run trials in rounds (each adds new cases of a seeded order, every attempt) and stop each skill
    as soon as its gate is decided (aces_bench/stats/sequential.py; docs/sequential.md)."""
    sequential_round_cases: int | None = Field(default=None, ge=1)
    """New cases per round of a sequential study, each run with every attempt (None: an eighth of a
    skill's cases, at least 5)."""
    sequential_spending: str | None = None
    """Removed: a sequential study reads the gate's own e-value at every look and spends no
    alpha (setting it is an error; kept so provenance written before reads)."""
    max_trials: int | None = Field(default=None, ge=1)
    """At most this many trials are run (reused baseline trials not counted): a fixed study above it
    is refused, a sequential one stops starting rounds."""
    reuse_baseline: bool = True
    """Reuse stored baseline and null-arm trials whose every input matches (aces_bench/run/reuse.py)."""
    reuse_max_age_days: float | None = Field(default=None, gt=0)
    """Reuse only stored trials younger than this (None: any age)."""

    @property
    def reuses_trials(self) -> bool:
        """Whether the study reuses stored trials and stores its own (``reuse_baseline``;
        never with ``stop_on_pass``, whose later attempts depend on the earlier ones)."""
        return self.reuse_baseline and not self.stop_on_pass

    @model_validator(mode="after")
    def _sequential_alone(self) -> StudySpec:
        if self.sequential and self.stop_on_pass:
            raise ValueError("study.sequential and study.stop_on_pass both schedule attempts; choose one "
                             "(a sequential study runs every attempt of a case in the round that adds it)")
        return self

    @field_validator("controls", mode="before")
    @classmethod
    def _controls(cls, v: Any) -> Any:
        # Hydra reads a bare `null` in `study.controls=[null,placebo]` as None.
        if v is None:
            return ()
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list | tuple):
            raise ValueError(f"expected a list of calibration arms ({', '.join(CONTROLS)}), got {v!r}")
        names = ["null" if c is None else c for c in v]
        bad = [repr(c) for c in names if c not in CONTROLS]
        if bad:
            raise ValueError(f"unknown calibration arm {', '.join(bad)}; allowed values: {', '.join(CONTROLS)} "
                             "(e.g. study.controls=[null,placebo,forced])")
        dup = sorted({c for c in names if names.count(c) > 1})
        if dup:
            raise ValueError(f"calibration arm {', '.join(dup)} listed twice; list each of {', '.join(CONTROLS)} once")
        return tuple(c for c in CONTROLS if c in names)  # one canonical order


MODEL_NOT_APPLICABLE = "n/a"


class RunSpec(_Frozen):
    """Everything one sweep member needs, validated."""

    schema_version: str = SPEC_SCHEMA_VERSION
    skill: SkillSpec
    harness: HarnessSpec
    model: ModelSpec
    workspace: WorkspaceSpec
    decoys: DecoySpec
    grading: GradingSpec
    backend: BackendSpec
    judge: JudgeSpec
    study: StudySpec
    output_dir: Path
    emit_only: bool = False
    report: bool = True
    overrides: list[str] = Field(default_factory=list)
    choices: dict[str, str] = Field(default_factory=dict)
    # The folder whose spend ledger the cost cap sums (aces_bench.run.cost): a sweep's or a
    # designed study's root for its members; None: output_dir.
    budget_dir: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _model_not_applicable(cls, data: Any) -> Any:
        """A harness that uses no model (the reference agent) records the model as not
        applicable and gets no endpoint: a harness sweep may mix it with model-driven
        harnesses under one ``model=...`` (Harbor refuses a base_url it cannot use)."""
        if not isinstance(data, dict):
            return data
        harness = data.get("harness")
        requires = harness.get("requires_model", True) if isinstance(harness, dict) else getattr(
            harness, "requires_model", True)
        if requires is False:
            data = {**data, "model": {"name": None, "base_url": None, "api_key_env": None, "label": MODEL_NOT_APPLICABLE}}
        return data

    @model_validator(mode="after")
    def _cross_checks(self) -> RunSpec:
        if self.harness.requires_model and not self.model.name:
            raise ValueError(
                f"harness {self.harness.name!r} needs a model: add model=<option> or model.name=<litellm model>"
            )
        if self.harness.requires_model:
            from aces_bench.agents.endpoints import check_api

            problem = check_api(self.harness.cli, self.model.name, self.model.api)
            if problem:
                raise ValueError(problem)
        if self.workspace.mode == "group" and not self.decoys.paths and not self.skill.support:
            raise ValueError(
                "workspace.mode is 'group' but no decoys or support skills are configured: add decoys=paper"
            )
        # Whether the agent can set itself up on the local backend is asked when a study
        # runs (study.preflight.preflight_local_agent): answering it imports Harbor's agent
        # factory, which reading a spec (reports, records) must not pay for.
        return self


def build_run_spec(cfg: DictConfig, *, overrides: list[str] | None = None, choices: dict[str, Any] | None = None) -> RunSpec:
    """Resolve the composed config and validate it into a RunSpec."""
    try:
        raw = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    except MissingMandatoryValue as exc:
        key = getattr(exc, "full_key", None) or "?"
        raise ConfigError(
            f"missing mandatory value '{key}'",
            where="config",
            fix=f"set it on the command line, e.g. {key}=...",
        ) from None
    except InterpolationValidationError as exc:
        # e.g. harness.name: ${.agent} while harness.agent is still ??? (unset).
        key = getattr(exc, "full_key", None) or "?"
        raise ConfigError(
            f"'{key}' refers to a value that is unset or of the wrong type: {str(exc).splitlines()[0]}",
            where="config",
            fix=f"set the key '{key}' refers to on the command line (see conf/README.md for the option's keys)",
        ) from None
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None)
        raise ConfigError(str(exc).splitlines()[0], where=f"config: {key}" if key else "config",
                          fix="check the named key") from None
    assert isinstance(raw, dict)
    raw.pop("hydra", None)
    raw["overrides"] = list(overrides or [])
    raw["choices"] = {str(k): str(v) for k, v in (choices or {}).items() if v is not None and not str(k).startswith("hydra")}
    spending = (raw.get("study") or {}).get("sequential_spending")
    if spending is not None:
        raise ConfigError(f"study.sequential_spending={spending} was removed: a sequential study reads the gate's "
                          "own e-value at every look, which spends no alpha (docs/sequential.md)",
                          where="study.sequential_spending", fix="drop study.sequential_spending")
    legacy = (raw.get("study") or {}).get("pass_threshold")
    if legacy is not None:
        # A second threshold (attempts used it, grading another): pass is decided once now.
        # Provenance written before keeps it, read but never acted on.
        raise ConfigError(f"study.pass_threshold={legacy:g} was removed: pass is decided once, by "
                          "grading.pass_threshold; attempts, pass@k, the gate and ci all read that one pass",
                          where="study.pass_threshold", fix=f"use grading.pass_threshold={legacy:g}")
    try:
        return RunSpec.model_validate(raw)
    except ValidationError as err:
        raise from_validation(err, where="config", fix="correct the listed keys with Hydra overrides (key=value)") from None
