"""The static HTML report: index, one page per skill, and the negative-lift triage page.

Self-contained and offline: CSS is inline, figures are SVG data URIs, and a Content
Security Policy forbids every fetch and script. Autoescape is on for every template:
trajectory text, answers and judge reasons are untrusted and always shown as text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel

from aces_bench.core.metrics import metric_names
from aces_bench.core.text import printable
from aces_bench.records.results import MetricResult
from aces_bench.records.self_correction import SelfCorrection
from aces_bench.records.trials import PAIR_KEY
from aces_bench.reports.labels import human_value, outcome_label, p_text, source_label
from aces_bench.reports.templating import cache_compiled

TEMPLATES = Path(__file__).parent / "templates"


COLUMN_LABELS = {
    "n": "pairs", "n_cases": "cases", "n_pairs": "pairs", "n_rows": "rows", "n_scored": "scored", "n_unscored": "unscored",
    "n_unscored_status_ok": "unscored though the trial ran", "n_keys": "case keys", "n_both": "scored on both sides",
    "n_with_only": "with-skill side only", "n_base_only": "baseline side only", "n_neither": "neither side",
    "n_no_trial_with": "no with-skill trial", "n_no_trial_base": "no baseline trial", "n_missing_trajectory": "no trajectory",
    "n_missing_trajectory_status_ok": "no trajectory though the trial ran", "n_partial": "resting on one metric",
    "mean_with": "with skill", "mean_base": "baseline", "lift": "lift", "sd": "SD", "se": "SE", "ci_lo": "CI low",
    "ci_hi": "CI high", "df": "df", "boot_se": "bootstrap SE", "boot_ci_lo": "bootstrap CI low",
    "boot_ci_hi": "bootstrap CI high", "n_clusters": "clusters", "n_clusters_2": "second-dimension clusters",
    "n_resamples": "resamples", "n_valid_resamples": "valid resamples", "cluster_by": "clustered by",
    "resampled": "what was resampled", "estimate": "estimate", "design_effect": "design effect",
    "n_pos": "positive", "n_zero": "zero", "n_neg": "negative", "share_pos": "share positive", "median": "median",
    "p_sign": "p, sign test", "p_perm": "p, sign-flip permutation", "perm_method": "permutation", "p_wilcoxon":
    "p, Wilcoxon", "p_mcnemar": "p, McNemar", "n_pass_with_only": "pass with skill only",
    "n_pass_base_only": "pass at baseline only", "pass_outcome": "pass/fail outcome",
    "p_sign_holm": "sign, Holm", "p_sign_bh": "sign, BH", "p_perm_holm": "permutation, Holm", "p_perm_bh": "permutation, BH",
    "p_wilcoxon_holm": "Wilcoxon, Holm", "p_wilcoxon_bh": "Wilcoxon, BH", "p_mcnemar_holm": "McNemar, Holm",
    "p_mcnemar_bh": "McNemar, BH", "mde": "minimum detectable lift", "target_lift": "target lift",
    "n_needed": "cases needed", "alpha": "alpha", "power": "power", "n_short": "cases short of k attempts",
    "n_one_side": "cases on one side only", "pass_with": "pass@k with skill", "pass_base": "pass@k baseline",
    "n_matched": "matched pairs", "n_unmatched_group": "group only", "n_unmatched_isolation": "isolation only",
    "lift_group": "lift, group", "lift_isolation": "lift, isolation", "premium": "premium", "method": "method",
    "note": "note", "n_trials": "trials", "n_known": "known", "n_activated": "activated", "n_unknown": "unknown",
    "rate": "rate", "level": "level", "n_observed": "observed pairs", "n_imputed_with": "imputed with-skill sides",
    "n_imputed_base": "imputed baseline sides", "lift_observed": "lift (observed)", "lift_lower": "lower bound",
    "ci_lo_lower": "its CI low", "ci_hi_lower": "its CI high", "lift_upper": "upper bound", "ci_lo_upper": "its CI low ",
    "ci_hi_upper": "its CI high ", "n_checks": "sub-checks", "n_decided": "decided", "n_undecided": "undecided",
    "share_undecided": "share undecided", "n_attempts": "attempts", "sd_between_attempts": "SD between attempts",
    "pooled_within_case_sd": "pooled within-case SD", "workspace_mode": "workspace mode", "case_kind": "case kind",
    "negative_control": "negative control", "failure_cause": "failure cause", "fail_value": "imputed value",
    "n_imputed": "imputed", "n_primary": "pairs (primary)", "lift_primary": "lift (primary)",
    "n_sensitivity": "pairs (imputed)", "lift_sensitivity": "lift (imputed)", "ci_lo_sensitivity": "CI low (imputed)",
    "ci_hi_sensitivity": "CI high (imputed)", "ci_method": "interval method", "ci_note": "interval note",
    "no_variation": "no variation", "adj_ci_lo": "adjusted CI low", "adj_ci_hi": "adjusted CI high",
    "adjustment": "adjustment", "no_variation_note": "note", "decoy_set": "decoy set", "k": "k",
}


def human(column: str) -> str:
    """A column name as a reader would say it (``n_unscored_status_ok`` -> "unscored though the trial ran")."""
    if column in COLUMN_LABELS:
        return COLUMN_LABELS[column]
    text = column.removeprefix("n_").replace("_", " ")
    return text


class PrintableTemplate(jinja2.Template):
    """A template whose whole rendered page has no control character (``core.text.printable``).

    On the page, not per value: trial output reaches pages escaped, as ``|safe`` Markup
    built in Python, and inside embedded JSON alike; one pass over the result covers them all.
    """

    def render(self, *args: Any, **kwargs: Any) -> str:
        return printable(super().render(*args, **kwargs))


def environment() -> jinja2.Environment:
    # autoescape=True (not select_autoescape): every template, whatever its name, escapes.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.template_class = PrintableTemplate
    env.filters["human"] = human
    env.filters["outcome_label"] = outcome_label
    env.filters["source_label"] = source_label
    env.filters["human_value"] = lambda value, column="": human_value(column, value)
    env.filters["p_text"] = p_text
    env.filters["attribution"] = attribution
    return cache_compiled(env)


def attribution(rows) -> dict[str, list[str]]:
    """Who produced a table's rows, once for the table: agents, models, backends and
    graders over every row (``LiftRow.produced_by``)."""
    out: dict[str, set[str]] = {"agents": set(), "models": set(), "backends": set(), "graders": set()}
    for r in rows:
        by = getattr(r, "produced_by", None)
        if by is None:
            continue
        for key in out:
            out[key].update(getattr(by, key))
    return {k: sorted(v) for k, v in out.items()}


def skill_slug(name: str) -> str:
    """A file-name-safe, collision-free slug for a skill name."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "skill"
    if safe != name:
        safe = f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return safe


def skill_href(name: str) -> str:
    return f"skills/{skill_slug(name)}.html"


def pair_anchor(key: dict) -> str:
    text = "\x1f".join(str(key[k]) for k in PAIR_KEY)
    return "pair-" + hashlib.sha256(text.encode()).hexdigest()[:12]


def svg_data_uri(path: Path) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


@dataclass
class MetricView:
    metric: str
    score: float | None
    grader: str
    unscored_reason: str | None
    sub_scores: dict[str, float | None]
    evidence: list[Any]
    judged: bool
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class TrialView:
    status: str
    failure_cause: str | None
    metrics: list[MetricView]
    composite: float | None
    reward: float | None
    self_correction: dict | None
    self_correction_check: MetricView | None
    final_pass: bool | None
    first_attempt_pass: bool | None
    final_answer: Clip | None
    trajectory: TrajectoryView | None
    trajectory_note: str
    trajectory_href: str | None = None
    read_limits: list[str] = field(default_factory=list)


@dataclass
class PairView:
    anchor: str
    case_id: str
    case_kind: str | None
    attempt: int
    harness: str
    model: str
    workspace_mode: str
    decoy_set: str
    lift: float | None
    instruction: Clip | None
    with_skill: TrialView | None
    baseline: TrialView | None
    sort_key: tuple = field(default=())


def metric_views(metrics: dict[str, MetricResult], row: dict) -> list[MetricView]:
    """Per-metric scores in the table's order; a metric with no grade falls back to the table's score."""
    out = []
    for name in metric_names():
        m = metrics.get(name)
        if m is not None:
            out.append(MetricView(name, m.score, m.grader, m.unscored_reason, dict(m.sub_scores), list(m.evidence),
                                  judged=name not in metric_names("deterministic")))
        else:
            score = row.get(f"metric_{name}")
            score = None if score is None or math.isnan(float(score)) else float(score)
            out.append(MetricView(name, score, "(no grades file)", None if score is not None else "not in grades",
                                  {}, [], judged=False))
    return out


def self_correction_view(m: MetricResult | None) -> tuple[dict | None, MetricView | None]:
    """Show the self_correction result as a metric whose ``details`` are its typed section
    (``SelfCorrection``: changes, first-attempt errors, retries, affected checks)."""
    if m is None:
        return None, None
    section = SelfCorrection.of(m)
    return None, MetricView(m.metric, m.score, m.grader, m.unscored_reason, dict(m.sub_scores), list(m.evidence),
                            judged=False, details=section.model_dump(mode="json") if section else {})


def render(env: jinja2.Environment, template: str, **ctx: Any) -> str:
    return env.get_template(template).render(**ctx)


def pretty_json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True, default=str)


class Clip(BaseModel):
    head: str
    rest: str = ""
    omitted: int = 0
    """Characters of the text not in the page at all (past ``EXCERPT_CHARS``)."""

    @property
    def more(self) -> int:
        return len(self.rest)


class CallView(BaseModel):
    call_id: str
    function: str
    arguments: Clip
    output: Clip | None = None


class StepView(BaseModel):
    step_id: int
    source: str
    scope: str = ""
    message: Clip
    reasoning: Clip | None = None
    calls: list[CallView]
    observations: list[Clip]


class TrajectoryView(BaseModel):
    agent: str
    schema_version: str
    n_steps: int
    n_tool_calls: int
    head: list[StepView]
    folded: list[StepView]
    tail: list[StepView]
    steps_omitted: int = 0
    """Steps of a long run not in the page (past ``MAX_STEPS_SHOWN``)."""


def relative(path: Path, start: Path) -> str:
    return path.relative_to(start).as_posix()
