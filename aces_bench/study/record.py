"""The study's own parts of its record (``aces_bench.records.study``): the resolved spec,
masked, with the provenance of the run, and the spend ledger when the study keeps its own.

Every other part is recorded where its file is written, with ``records.study.record_part``.
"""

from __future__ import annotations

from pathlib import Path

from aces_bench.config.spec import RunSpec
from aces_bench.core.io import write_json
from aces_bench.records.provenance import Provenance, SkillProvenance
from aces_bench.records.study import KINDS, record_part, write_spec
from aces_bench.run.cost import LEDGER_FILE, SpendEntry, budget_dir
from aces_bench.study.provenance import build_provenance


def record_run(out: Path, spec: RunSpec, skills: list[SkillProvenance], job_dir: Path | None) -> None:
    """Write and record what the study runs: ``spec.json`` (the composed spec, masked) and
    ``provenance.json`` (the same spec with the versions, checkout, CLI and skills that ran
    it, and its Harbor job folder: None with ``emit_only``); ``skills``: what it stages
    (``provenance.planned_skills``)."""
    provenance = build_provenance(spec, skills, job_dir)
    write_spec(out, provenance.spec)
    write_json(out / KINDS["provenance"].file, provenance)
    record_part(out, "provenance", Provenance, stage="study")


def record_cost(out: Path, spec: RunSpec) -> None:
    """Record the spend ledger when it is this folder's own (a sweep's or design's member
    spends into its root's ledger) and a trial has spent into it."""
    if budget_dir(spec) == Path(out).resolve() and (Path(out) / LEDGER_FILE).is_file():
        record_part(out, "cost", SpendEntry, stage="run")
