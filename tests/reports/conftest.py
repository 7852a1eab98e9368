"""Session fixtures: one synthetic multirun study and its report, built once."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.reports import make_study

from aces_bench.analysis import build_report


@pytest.fixture(scope="session")
def study_dir(tmp_path_factory) -> Path:
    return make_study(tmp_path_factory.mktemp("study"))


@pytest.fixture(scope="session")
def report_dir(study_dir) -> Path:
    index = build_report(study_dir)
    assert index == study_dir / "report" / "index.html"
    return index.parent
