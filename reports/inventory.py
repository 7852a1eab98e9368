"""The rows of the evidence inventory and per-harness coverage, as the tables and pages
show them (``aces_bench.analysis.inventory`` counts them)."""

from __future__ import annotations

from pydantic import BaseModel

WHOLE_STUDY = "whole study (every arm and condition)"


class InventoryItem(BaseModel):
    item: str
    count: int | None
    note: str = ""
    analysis_set: str = WHOLE_STUDY


class CoverageRow(BaseModel):
    harness: str
    models: list[str]
    n_skills: int
    n_cells: int
    n_trials: int
    n_ok: int
    n_failed: int
    n_scored_pairs: int
    lift: float | None


