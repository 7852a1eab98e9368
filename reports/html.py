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

from aces_bench.graders.base import MetricResult
from aces_bench.graders.self_correction import SelfCorrection
from aces_bench.metrics import metric_names
from aces_bench.records import PAIR_KEY
from aces_bench.reports.trajectory_view import Clip, TrajectoryView

TEMPLATES = Path(__file__).parent / "templates"


def environment() -> jinja2.Environment:
    # autoescape=True (not select_autoescape): every template, whatever its name, escapes.
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


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
