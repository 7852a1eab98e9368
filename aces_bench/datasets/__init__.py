"""Evaluation assets: the case model, its file formats, EVAL.md intent, and dataset creation.

Public API (import from here):
- ``EvalCase``, ``EvalSuite``, ``Check``, ``FileSpec``: the versioned case model.
- ``load_suite(skill_dir, skill_name)``: every case of a skill, validated and checked.
- ``write_suite(path, suite)``: the one canonical written form.
- ``resolve_credentials(case, environ)``: credential values at run time only.
- ``parse_eval_md(text, path)``: the author's EVAL.md intent.
- ``create_dataset(...)`` / ``refine_dataset(...)``: ``aces-bench dataset create`` and ``aces-bench dataset refine``.
"""

from __future__ import annotations

from aces_bench.cases.credentials import check_credential_name, resolve_credentials
from aces_bench.cases.formats import load_suite, read_assets, write_suite
from aces_bench.cases.model import (
    EVALS_SCHEMA_VERSION,
    Check,
    EvalCase,
    EvalSuite,
    FileSpec,
)

__all__ = [
    "EVALS_SCHEMA_VERSION",
    "Check",
    "EvalCase",
    "EvalSuite",
    "FileSpec",
    "check_credential_name",
    "load_suite",
    "read_assets",
    "resolve_credentials",
    "write_suite",
]
