"""The one entry to a study: ``run_study(spec)`` chooses what kind of study the spec is.

A designed study (``study.arms``, e.g. ``study=aces_paper``) runs its members one by one
through ``design``; any other spec is one study, run by ``pipeline``. Choosing here, above
both, keeps the flow one way: ``design`` runs members through ``pipeline``, and
``pipeline`` never climbs back up to ``design``.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.config.spec import RunSpec
from aces_bench.study.design import run_design
from aces_bench.study.pipeline import run_member


def run_study(spec: RunSpec) -> Path:
    """Run one sweep member (or a designed study's members); returns its output dir.
    Re-running resumes."""
    if spec.study.arms:
        return run_design(spec)
    return run_member(spec)[0]
