"""Grading modes: what drives a trial's composite and its pass/fail.

The modes themselves, and pass, are decided in ``aces_bench/core/modes.py``; this
module runs what a mode needs on the host (author graders, the composite).

- ``aces_default``: the six ACES metrics. Composite = their weighted mean
  (``GradingSpec.weight_of``, default 1/6 each, renormalised over the scored ones);
  final pass = the task outcome (verifier reward, else judged) >= ``grading.pass_threshold``.
  Author graders are not run.
- ``aces_plus_custom``: as ``aces_default``; the skill's author graders also run and
  are reported separately (``author:<name>`` metrics and ``author_score``). They
  change neither the dimensions nor the composite.
- ``custom_only``: the author's reward contract alone drives pass/fail and lift:
  composite = ``author_score``, final pass = every author grader passed. The six
  metrics are still computed and shown, but decide nothing.

``author_score`` is the mean of the author graders' scores when *all* of them were
scored; one unscored grader leaves it unscored (a partial contract is not the
contract). A grader's pass is its ``passed`` when it printed one, else its score
>= ``pass_threshold``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aces_bench.config.spec import GradingSpec
from aces_bench.core.errors import ConfigError
from aces_bench.core.modes import MODE_NAMES, mode
from aces_bench.graders.author import GRADERS_DIR, PREFIX, discover_author_graders
from aces_bench.graders.dimensions import weighted_composite
from aces_bench.records.results import MetricResult

MODES = MODE_NAMES


def runs_author_graders(mode_name: str) -> bool:
    return mode(mode_name).runs_author_graders


@dataclass(frozen=True)
class Verdict:
    composite: float | None
    author_score: float | None
    author_pass: bool | None
    note: str | None = None


def author_metrics(metrics: Mapping[str, MetricResult]) -> dict[str, MetricResult]:
    return {k: v for k, v in metrics.items() if k.startswith(PREFIX)}


def author_aggregate(
    author: Mapping[str, MetricResult], pass_threshold: float
) -> tuple[float | None, bool | None, str | None]:
    """(author_score, author_pass, why unscored) over a trial's author metrics."""
    if not author:
        return None, None, "the skill has no author graders"
    missing = [k for k, m in author.items() if m.score is None]
    if missing:
        first = author[missing[0]]
        return None, None, f"author grader {missing[0]} unscored: {first.unscored_reason}"
    scores = [m.score for m in author.values() if m.score is not None]
    passes = [
        m.details["passed"] if isinstance(m.details.get("passed"), bool) else (m.score or 0.0) >= pass_threshold
        for m in author.values()
    ]
    return round(sum(scores) / len(scores), 6), all(passes), None


def decide(grading: GradingSpec, metrics: Mapping[str, MetricResult]) -> Verdict:
    """The composite and the author graders' aggregate of one trial under ``grading.mode``.

    Outcome and pass are decided from these by ``graders/outcome.trial_outcome`` (the
    mode's ``decide``, ``aces_bench/core/modes.py``): pass is decided there once.
    """
    m = mode(grading.mode)
    score, passed, why = author_aggregate(author_metrics(metrics), grading.pass_threshold)
    if not m.runs_author_graders:
        score, passed, why = None, None, None
    if m.author_decides:
        return Verdict(composite=score, author_score=score, author_pass=passed,
                       note=f"{grading.mode}: {why}" if why else None)
    composite = weighted_composite(metrics, grading.metrics, grading.weight_of)
    return Verdict(composite=composite, author_score=score, author_pass=passed,
                   note=f"{grading.mode}: {why}" if why else None)


def check_author_graders(mode: str, skill_dirs: Mapping[str, Path | None]) -> None:
    """Refuse a mode that needs author graders when a target skill has none.

    ``custom_only`` needs graders for every target skill (nothing else can decide its
    trials); ``aces_plus_custom`` for at least one (else the mode adds nothing, which
    is most likely a mistake). Also surfaces a bad graders folder (EvalsError).
    """
    if not runs_author_graders(mode):
        return
    have = {name: bool(discover_author_graders(d)) for name, d in skill_dirs.items()}
    lacking = sorted(n for n, ok in have.items() if not ok)
    if not lacking or (mode == "aces_plus_custom" and len(lacking) < len(have)):
        return
    raise ConfigError(
        f"grading.mode={mode} but skill(s) {', '.join(lacking)} have no author graders",
        where="grading.mode",
        fix=f"add {GRADERS_DIR}/<name>.py or <name>.sh to each skill (they print {{\"score\": 0..1, \"passed\": "
            "bool}}), or use grading=aces_default",
    )
