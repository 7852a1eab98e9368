"""Evaluation cases (kept for existing imports): the model and loader live in ``aces_bench.datasets``.

``EvalCase``, ``EvalSuite``, ``Check``, ``FileSpec`` and ``load_suite(skill_dir,
skill_name)`` are re-exported unchanged; see ``aces_bench/datasets/model.py`` for the
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
