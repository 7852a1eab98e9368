"""The study's own parts of its record (``aces_bench.records.study``): the resolved spec,
masked, and the spend ledger when the study keeps its own.

Every other part is recorded where its file is written, with ``records.study.record_part``.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.config.spec import RunSpec
from aces_bench.records.study import record_part, write_spec
from aces_bench.run.cost import LEDGER_FILE, SpendEntry, budget_dir
from aces_bench.study.provenance import masked_spec


def record_spec(out: Path, spec: RunSpec) -> None:
    """Write and record ``spec.json``, the composed spec the study runs."""
    write_spec(out, masked_spec(spec))


def record_cost(out: Path, spec: RunSpec) -> None:
    """Record the spend ledger when it is this folder's own (a sweep's or design's member
    spends into its root's ledger) and a trial has spent into it."""
    if budget_dir(spec) == Path(out).resolve() and (Path(out) / LEDGER_FILE).is_file():
        record_part(out, "cost", SpendEntry, stage="run")
