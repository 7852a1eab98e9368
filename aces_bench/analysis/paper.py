"""The paper page's static scan: the study's scanned target skills scanned once more with
the study's rule profile, compared with the paper's corpus and grouped by category (the
paper's Table 5). ``aces_bench.reports.paper`` draws and tabulates it;
``side_by_side`` sets it against the paper's values.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from aces_bench.reports.reported import ScanView

UNCATEGORISED = "uncategorised"  # a skill whose SKILL.md names no category


def _category(path: str) -> str:
    """A skill's category from its SKILL.md frontmatter (``category`` or ``metadata.category``)."""
    from aces_bench.core.errors import AcesError
    from aces_bench.inputs.skills import parse_frontmatter

    p = Path(path) / "SKILL.md"
    try:
        meta, _ = parse_frontmatter(p.read_text(encoding="utf-8", errors="replace"), p)
    except (OSError, AcesError):
        return UNCATEGORISED
    value = meta.get("category") or (meta.get("metadata") or {}).get("category") if isinstance(meta, dict) else None
    return str(value).strip() if isinstance(value, str | int) and str(value).strip() else UNCATEGORISED


def scan_for_paper(static, reported: dict) -> ScanView | None:
    """Scan the study's scanned targets once, with the study's rule profile: scores,
    the comparison with the paper, and the corpus by category (the paper's Table 5)."""
    if static is None:
        return None
    scanned = sorted({s.path for s in static.skills if s.status == "scanned" and s.structural is not None})
    if not scanned:
        return None
    from aces_bench.static import ScanOptions, run_scan
    from aces_bench.static.catalog import catalog
    from aces_bench.static.corpus import compare

    profile = static.profile or "aces"
    corpus, results = run_scan(scanned, ScanOptions(lint=False, profile=profile))
    ok = [r for r in results if r.score is not None]
    frame = pd.DataFrame({"category": [_category(r.path) for r in ok], "score": [float(r.score) for r in ok]})
    cats = []
    for cat, part in frame.groupby("category", sort=True):
        cats.append({"category": str(cat), "n": len(part), "mean": float(part["score"].mean()),
                     "median": float(part["score"].median())})
    return ScanView(profile=profile, scores=[float(r.score) for r in ok],
                    comparison=compare(corpus, reported.get("static_scan", {}), catalog(profile)), categories=cats)
