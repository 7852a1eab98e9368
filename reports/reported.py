"""The ACES paper's reported figures (``aces_paper_reported.json``, packaged beside the reports).

Read by the paper page (``paper.py``) and the paper's LaTeX tables (``latex.py``): it sits
below both, so neither imports the other to reach it.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

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
