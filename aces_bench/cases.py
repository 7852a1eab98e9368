"""Evaluation cases: the name the pipeline imports them by (emitters, graders, judges, reports).

The model and loaders live in ``aces_bench.datasets``; ``EvalCase``, ``EvalSuite``,
``Check``, ``FileSpec`` and ``load_suite(skill_dir, skill_name)`` are re-exported here
so that the rest of aces-bench depends on one small module rather than on the
datasets package's layout; see ``aces_bench/datasets/model.py`` for the
versioned model and ``aces_bench/datasets/formats.py`` for the asset formats.
"""

from __future__ import annotations

from aces_bench.datasets.credentials import resolve_credentials
from aces_bench.datasets.formats import load_suite, write_suite
from aces_bench.datasets.model import (
    EVALS_SCHEMA_VERSION,
    SAFE_CASE_ID,
    CaseKind,
    Check,
    EvalCase,
    EvalSuite,
    FileSpec,
)

__all__ = [
    "EVALS_SCHEMA_VERSION",
    "SAFE_CASE_ID",
    "CaseKind",
    "Check",
    "EvalCase",
    "EvalSuite",
    "FileSpec",
    "load_suite",
    "resolve_credentials",
    "write_suite",
]
