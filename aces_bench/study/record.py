"""The study's own parts of its record (``aces_bench.records.study``): the resolved spec,
masked, and the spend ledger when the study keeps its own.

Every other part is recorded where its file is written, with ``records.study.record_part``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aces_bench.config.spec import RunSpec
from aces_bench.core.masking import credential_values
from aces_bench.graders.redact import redact_known_value, redact_value
from aces_bench.records.study import record_part, write_spec
from aces_bench.run.cost import LEDGER_FILE, SpendEntry, budget_dir


def _credential_names(value: Any) -> list[str]:
    """The environment variables the spec names as credentials (every ``*_env`` key)."""
    if isinstance(value, dict):
        named = [v for k, v in value.items() if k.endswith("_env") and isinstance(v, str) and v]
        return named + [n for v in value.values() for n in _credential_names(v)]
    if isinstance(value, list):
        return [n for v in value for n in _credential_names(v)]
    return []


def masked_spec(spec: RunSpec) -> dict[str, Any]:
    """The spec's JSON with secret-like strings masked (the graders' patterns, as grades are)
    and the value of every credential it names masked wherever it appears (``core.masking``):
    a key pasted into ``harness.env`` or a URL never reaches ``spec.json``."""
    dumped = redact_value(spec.model_dump(mode="json"))
    return redact_known_value(dumped, credential_values(sorted(set(_credential_names(dumped)))))


def record_spec(out: Path, spec: RunSpec) -> None:
    """Write and record ``spec.json``, the composed spec the study runs."""
    write_spec(out, masked_spec(spec))


def record_cost(out: Path, spec: RunSpec) -> None:
    """Record the spend ledger when it is this folder's own (a sweep's or design's member
    spends into its root's ledger) and a trial has spent into it."""
    if budget_dir(spec) == Path(out).resolve() and (Path(out) / LEDGER_FILE).is_file():
        record_part(out, "cost", SpendEntry, stage="run")
