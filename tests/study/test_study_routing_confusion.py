"""A group-mode study reports a routing confusion matrix over every visible skill (issue 27, point 8).

A real study on the local sandbox with the reference agent: the target (csv-column-sum),
a decoy (text-stats) staged beside it, and three cases: one meant for the target, one
meant for the decoy (``expected_skill: text-stats``), a negative control. Each trial's
first activation is read from its trajectory; the report's summary carries one table per
condition, rows the skill each case is meant for, columns every visible skill.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
from support.studies import FIXTURE_SKILL, needs_bwrap, read_table, study_overrides

from aces_bench.config.compose import compose_spec
from aces_bench.study.entry import run_study

DECOY = Path(__file__).resolve().parents[1] / "fixtures" / "decoys" / "text-stats"


@needs_bwrap
def test_group_mode_study_reports_which_skill_fired_for_which(tmp_path):
    skill = tmp_path / "csv-column-sum"
    shutil.copytree(FIXTURE_SKILL, skill)
    (skill / "evals" / "files" / "notes.txt").write_text("The quick brown fox jumps over the lazy dog.\n")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "csv-column-sum", "evals": [
        {"id": "explicit-1", "prompt": "Use the csv-column-sum skill to sum the amount column of the CSV file.",
         "files": ["evals/files/sales.csv"], "assertions": [{"kind": "number", "value": 141.75, "tolerance": 0.001}]},
        {"id": "route-1", "prompt": "Count the words and characters in this plain text document.",
         "expected_skill": "text-stats", "files": ["evals/files/notes.txt"]},
        {"id": "negative-1", "kind": "negative", "expected_skill": None, "prompt": "What is 2 + 2?"},
    ]}))
    out = tmp_path / "out"
    spec = compose_spec([*study_overrides(skill=skill, cases=("explicit-1", "route-1", "negative-1"),
                                          root_parent=tmp_path),
                         "workspace=group", f"decoys.paths=[{DECOY}]", "decoys.name=fixture", "report=true"],
                        output_dir=out)
    run_study(spec)
    table = read_table(out).set_index(["case_id", "condition"])
    assert table.loc[("route-1", "with_skill"), "expected_skill"] == "text-stats"
    assert pd.isna(table.loc[("negative-1", "with_skill"), "expected_skill"])  # a negative control expects none
    assert table.loc[("explicit-1", "with_skill"), "fired_skill"] == "csv-column-sum"
    assert table.loc[("route-1", "with_skill"), "fired_skill"] == "text-stats"
    summary = json.loads((out / "report" / "summary.json").read_text())
    tables = {t["group"]["condition"]: t for t in summary["routing_confusion"]}
    assert set(tables) == {"with_skill", "baseline"}
    w = tables["with_skill"]
    assert w["rows"] == ["csv-column-sum", "text-stats", "(none)"]
    assert w["columns"][:2] == ["csv-column-sum", "text-stats"] and w["columns"][-2:] == ["(none)", "(failed)"]
    cell = {(r, c): w["counts"][i][j] for i, r in enumerate(w["rows"]) for j, c in enumerate(w["columns"])}
    assert cell[("csv-column-sum", "csv-column-sum")] == 1 and cell[("text-stats", "text-stats")] == 1
    assert w["n_trials"] == 3 and w["n_right"] == sum(cell[(r, r)] for r in w["rows"])
    # the baseline cannot see the target: a case meant for it expects none there
    b = tables["baseline"]
    assert "csv-column-sum" not in b["rows"] and "csv-column-sum" not in b["columns"]
    index = (out / "report" / "index.html").read_text()
    assert 'id="routing-confusion"' in index and "expected \\ fired" in index
