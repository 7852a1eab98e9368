"""The paper page (reports/paper.py) on the synthetic multirun study: every reported
quantity beside the study's own, and the overlays labelled "ACES paper, reported"."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from aces_bench.analysis import build_report
from aces_bench.reports.paper import REPORTED_LABEL, load_reported

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "aces-paper" / "reported.json"


def test_the_packaged_reported_figures_are_the_papers():
    if not SHARED.is_file():
        pytest.skip("../shared/data/aces-paper/reported.json is not here")
    assert load_reported() == json.loads(SHARED.read_text())


def test_paper_page_sets_each_reported_value_beside_the_studys(study_dir, tmp_path):
    out = tmp_path / "report"
    build_report(study_dir, out_dir=out, paper=True, static=False)
    page = (out / "paper.html").read_text()
    assert page.count(REPORTED_LABEL) >= 2
    for name in ("paper_metric_lift", "paper_harness_lift", "paper_harness_model_heatmap", "skill_harness_heatmap",
                 "model_sweep"):
        svg = out / "paper" / f"{name}.svg"
        assert svg.is_file(), name
    assert REPORTED_LABEL in (out / "paper" / "paper_metric_lift.svg").read_text()
    table = pd.read_csv(out / "paper" / "side_by_side.csv").set_index("quantity")
    assert table.loc["composite lift", "reported"] == 0.2134 and pd.notna(table.loc["composite lift", "study"])
    assert table.loc["terminus-2 composite lift", "reported"] == 0.0896
    assert pd.notna(table.loc["terminus-2 composite lift", "study"])
    # opencode is not in this study: the paper's value stands alone, the study's is n/a, not 0.
    assert pd.isna(table.loc["opencode composite lift", "study"])
    assert table.loc["opencode composite lift", "note"] == "harness not in this study"
    # A static-free report says why the scan figures are not drawn.
    assert "not drawn because no target skill was scanned" in page
