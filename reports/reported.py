"""The ACES paper's reported figures (``aces_paper_reported.json``, packaged beside the reports)
and the paper page's static scan (``ScanView``).

Read by the paper page (``paper.py``), the paper's LaTeX tables (``latex.py``) and the
analysis that builds the page's rows and scan (``aces_bench.analysis.paper``,
``aces_bench.analysis.side_by_side``): it sits below all of them and draws nothing, so none
imports the drawing code to reach it.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from aces_bench.core.errors import ReportError

REPORTED_FILE = "aces_paper_reported.json"


def load_reported(path: Path | None = None) -> dict[str, Any]:
    """The paper's reported figures (the packaged copy unless ``path`` is given)."""
    try:
        text = Path(path).read_text() if path is not None else (
            resources.files("aces_bench.reports").joinpath(REPORTED_FILE).read_text())
        data = json.loads(text)
    except (OSError, ValueError) as exc:
        raise ReportError(f"cannot read the paper's reported figures: {exc}", where=path or REPORTED_FILE,
                          fix="pass the ACES paper's reported.json") from None
    if not isinstance(data, dict) or "headline_live" not in data:
        raise ReportError("not a reported-figures file (no headline_live block)", where=path or REPORTED_FILE,
                          fix="pass the ACES paper's reported.json")
    return data


def finite(x: Any) -> float | None:
    """A reported or computed value as a finite float; None for a missing, non-numeric or
    infinite one (shown "n/a", never 0)."""
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


class ScanView(BaseModel):
    """The one Tier 1 scan the paper page's static figures and tables come from."""

    profile: str
    scores: list[float]
    comparison: dict[str, Any]
    categories: list[dict[str, Any]]

    @property
    def violations(self) -> list[dict]:
        return self.comparison.get("violation_rows", [])
