"""Evaluation cases: the model, its file formats, and the face the pipeline imports them by.

``EvalCase``, ``EvalSuite``, ``Check``, ``FileSpec``, ``load_suite(skill_dir, skill_name)``,
``write_suite`` and ``resolve_credentials`` are re-exported here (emitters, graders, judges
and reports import them from ``aces_bench.cases``). The folder owns the versioned case
model (``model``), the asset formats and the readers of other tools' shapes (``formats``,
``readers``), EVAL.md intent (``evalmd``), the credentials a case names (``credentials``)
and the case-id safety rules (``safety``). Creating and refining cases (``aces-bench
dataset``, ``aces-bench trigger``) is ``aces_bench.datasets``.

May import: ``aces_bench.inputs`` and ``aces_bench.core``.
"""

from __future__ import annotations

from aces_bench.cases.credentials import resolve_credentials
from aces_bench.cases.formats import load_suite, write_suite
from aces_bench.cases.model import (
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
