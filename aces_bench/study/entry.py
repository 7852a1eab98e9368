"""The one entry to a study: ``run_study(spec)`` chooses what kind of study the spec is.

A designed study (``study.arms``, e.g. ``study=aces_paper``) runs its members one by one
through ``design``; any other spec is one study, run by ``pipeline``. Choosing here, above
both, keeps the flow one way: ``design`` runs members through ``pipeline``, and
``pipeline`` never climbs back up to ``design``. A design's members are composed here
(``design.compose_members``), all of them before the first runs: nothing is composed
through Hydra again mid-run.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.config.spec import RunSpec
from aces_bench.study.design import compose_members, run_design
from aces_bench.study.pipeline import run_member


def run_study(spec: RunSpec) -> Path:
    """Run one sweep member (or a designed study's members); returns its output dir.
    Re-running resumes."""
    if not spec.study.arms:
        return run_member(spec)[0]
    # Every member's spec is composed here, once, before anything runs.
    return run_design(spec, compose_members(spec))
