"""Structured-config schemas, one per config group.

Each YAML option under ``conf/<group>/`` extends ``base_<group>`` (registered in
``store.py``), so a misspelled key fails when Hydra composes, before anything runs.
Value checks (allowed names, ranges) happen once, in ``spec.RunSpec``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from omegaconf import MISSING

from aces_bench.core.metrics import metric_names


@dataclass
class SkillConf:
    paths: list[str] = MISSING
    """Skill folders, or folders holding skill folders."""
    support: list[Any] = field(default_factory=list)
    """Non-target skills staged in both conditions: a path (role 'helper') or
    ``{path: ..., role: prerequisite|helper|reference|decoy}``."""
    cases: list[str] = field(default_factory=list)
    """Only these case ids (empty: all)."""
    intervention: str = "skill"
    """What is added or withheld: 'skill' (each target alone), 'bundle' (all targets
    together, named ``intervention_name``) or 'plugin' (each path is a plugin folder)."""
    intervention_name: Optional[str] = None
    harbor_tasks: bool = True
    """Pair the native Harbor tasks under each target's ``evals/harbor/<task>/``."""
    accept_drafts: bool = False
    """Run cases still marked ``status: draft`` (drafted by ``dataset create``, not yet reviewed)."""
    allow_credentials: list[str] = field(default_factory=list)
    """Credential names cases may use although they look like operator credentials
    (``*_API_KEY``, ``AWS_*``, ...). Never process settings or the model's/judge's own."""
    evals_file: Optional[str] = None
    """Read only this evals file of each skill (relative to the skill folder, e.g.
    ``evals/evals2.json``) instead of the folder's rule."""


@dataclass
class HarnessConf:
    name: str = MISSING
    agent: Optional[str] = None
    import_path: Optional[str] = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    requires_model: bool = True
    label: str = ""
    cli: Optional[str] = None
    """An npm agent CLI (claude-code, codex, opencode) from ``aces-bench agents install``,
    mounted read-only into every trial."""
    bundled_skills: str = "off"
    """The skills the CLI ships with: ``off`` hides them from the model in both arms
    (the controlled default), ``keep`` leaves them listed."""


@dataclass
class ModelConf:
    name: Optional[str] = None
    base_url: Optional[str] = None
    """The endpoint's host, with or without ``/v1``; each harness calls its own API's path on it."""
    api_key_env: Optional[str] = None
    label: Optional[str] = None
    api: Optional[str] = None
    """The wire API the endpoint speaks when it is not the model's own (a translating
    gateway): ``anthropic``, ``openai-responses`` or ``openai-chat``."""
    version: Optional[str] = None
    """The provider's version string of the model (a dated snapshot, say), when ``name`` does
    not pin one; part of the key under which baseline trials are reused."""


@dataclass
class WorkspaceConf:
    mode: str = MISSING
    workdir: str = "/workspace"
    skills_dir: str = "/skills"
    answer_file: str = "answer.txt"
    base_image: str = "python:3.12-slim"
    custom_environment: bool = True
    """Build on a target's ``evals/environment/`` (Dockerfile, Compose, MCP servers) when present."""
    network: str = "no-network"
    cpus: int = 1
    memory_mb: int = 2048
    storage_mb: Optional[int] = None
    """Disk for the trial's own file system (Harbor's ``storage_mb``); None: no limit set."""
    agent_timeout_sec: float = 300.0
    verifier_timeout_sec: float = 60.0


@dataclass
class DecoysConf:
    name: str = MISSING
    paths: list[str] = field(default_factory=list)
    size: Optional[int] = None
    """How many decoys to draw from the pool (None: all of it)."""
    seed: int = 0
    """Seed of the draw: sizes drawn with one seed are nested (size 5 holds size 1's)."""


@dataclass
class GradingConf:
    mode: str = "aces_default"
    metrics: list[str] = field(default_factory=lambda: list(metric_names()))
    weights: dict[str, float] = field(default_factory=dict)
    pass_threshold: float = 1.0


@dataclass
class BackendConf:
    name: str = MISSING
    type: Optional[str] = None
    import_path: Optional[str] = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    delete: bool = True
    label: str = ""


@dataclass
class JudgeConf:
    kind: str = "heuristic"
    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    temperature: float = 0.0
    max_concurrency: int = 4
    timeout_sec: float = 60.0
    max_retries: int = 4
    cache_dir: Optional[str] = None
    models: list[Any] = field(default_factory=list)
    """A panel: several judges grade every judged metric (model strings, 'heuristic', or {model, base_url, api_key_env})."""
    aggregate: str = "mean"
    """How a panel's scores of one metric make its headline score: mean or median."""


@dataclass
class ArmConf:
    name: str = MISSING
    grid: dict[str, list[str]] = field(default_factory=dict)
    """Override key -> values; the arm's members are their Cartesian product."""
    overrides: list[str] = field(default_factory=list)
    """Overrides every member of the arm gets (before the grid's)."""


@dataclass
class GateConf:
    """The gate (aces_bench/stats/gate.py, docs/gate.md): the report's verdict column and
    ``aces-bench ci``; ``report --fail-under-lift X`` sets the threshold for its run."""

    threshold: float = 0.0
    """Lift (pass rate, with minus without) the skill must credibly exceed."""
    alpha: float = 0.05
    """One-sided level of the test that the skill helps."""
    min_cases: int = 5
    """Distinct cases the skill must win by more than the threshold."""
    harm_alpha: float = 0.2
    """One-sided level of the harm tests (should-not-use cases)."""
    null_alpha: float = 0.05
    """Two-sided level of the null arm's test."""
    family: str = "holm"
    """Adjustment of "helps" and "harms" across the study's skills: holm, or none (per-skill, unadjusted)."""


@dataclass
class StudyConf:
    name: str = MISSING
    description: str = ""
    n_attempts: int = 1
    n_concurrent: int = 2
    seed: int = 0
    pass_threshold: Optional[float] = None
    """Removed: pass is decided once, by grading.pass_threshold (setting it is an error)."""
    max_infra_retries: int = 2
    """Reruns of a trial that failed for infrastructure before the agent started (or on a
    model provider error); a trial still failing after them is excluded and counted."""
    gate: GateConf = field(default_factory=GateConf)
    stop_on_pass: bool = False
    """Skip a case's later attempts once one passes (recorded as skipped)."""
    max_cost_usd: Optional[float] = None
    max_output_gb: Optional[float] = 20.0
    """Refuse to start above this estimated cost; stop once real usage crosses it (USD)."""
    expected_input_tokens: int = 50_000
    """Per model-driven trial: the one token estimate behind the preview, the design's
    size, a sweep's total and the cost cap (``aces_bench.core.pricing``)."""
    expected_output_tokens: int = 3_000
    static_profile: str = "aces"
    """Tier 1 rule profile of the report's static-vs-live scan: aces | skillevaluator."""
    paper_page: bool = False
    """Add the paper page (report/paper.html: the ACES paper's reported figures beside
    this study's) to the report; study=aces_paper sets it."""
    axes: dict[str, list[str]] = field(default_factory=dict)
    """Named value lists that ``arms`` interpolate (``${study.axes.harnesses}``), so a
    user changes one list on the command line instead of an arm."""
    arms: list[ArmConf] = field(default_factory=list)
    """A designed study (e.g. study=aces_paper): the union of these grids, each member
    run as its own study under ``<output_dir>/<member>/`` and reported together."""
    harness_models: dict[str, str] = field(default_factory=dict)
    """Model option per harness for members whose arm sets no model (empty: the
    ``model=`` of the command line for every harness)."""
    scan_tiers: list[int] = field(default_factory=list)
    """Static scan tiers the design includes (1: structural, 2: LLM rubric)."""
    controls: list[Optional[str]] = field(default_factory=list)
    """Calibration arms run beside with_skill and baseline, in the same pairing:
    ``null`` (the baseline run again, analysed as the treatment), ``placebo`` (a sham
    skill with the target's name and description) and ``forced`` (the target's SKILL.md
    in the instruction). Default: none."""
    sequential: bool = False
    """Run trials in rounds (each adds new cases of a seeded order, every attempt) and stop each skill
    as soon as its gate is decided (aces_bench/stats/sequential.py; docs/sequential.md)."""
    sequential_round_cases: Optional[int] = None
    """New cases per round of a sequential study, each run with every attempt (None: an eighth of a skill's cases, at least 5)."""
    max_trials: Optional[int] = None
    """At most this many trials are run (reused baseline trials not counted): a fixed study above it
    is refused, a sequential one stops starting rounds."""
    reuse_baseline: bool = True
    """Reuse stored baseline and null-arm trials whose every input matches (aces_bench/run/reuse.py)."""
    reuse_max_age_days: Optional[float] = None
    """Reuse only stored trials younger than this (None: any age)."""


@dataclass
class RootConf:
    skill: SkillConf = MISSING
    harness: HarnessConf = MISSING
    model: ModelConf = MISSING
    workspace: WorkspaceConf = MISSING
    decoys: DecoysConf = MISSING
    grading: GradingConf = MISSING
    backend: BackendConf = MISSING
    judge: JudgeConf = MISSING
    study: StudyConf = MISSING
    output_dir: str = MISSING
    emit_only: bool = False
    report: bool = True


GROUP_SCHEMAS = {
    "skill": SkillConf,
    "harness": HarnessConf,
    "model": ModelConf,
    "workspace": WorkspaceConf,
    "decoys": DecoysConf,
    "grading": GradingConf,
    "backend": BackendConf,
    "judge": JudgeConf,
    "study": StudyConf,
}
