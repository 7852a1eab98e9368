"""A reduced study=aces_paper run: the reference agent and terminus-2 (driven by a
scripted OpenAI-compatible server on loopback) on one fixture skill, every arm of the
paper's design shrunk through study.axes; the report's paper page draws every paper
figure and the side-by-side table with the paper's reported values."""

from __future__ import annotations

import json

import pandas as pd
from support.model_server import ModelServer
from support.studies import needs_bwrap, study_overrides
from support.terminus_policy import terminus_policy

from aces_bench.config.compose import compose_spec
from aces_bench.reports.paper import REPORTED_LABEL
from aces_bench.study.entry import run_study

FIGURES = ("paper_metric_lift", "skill_harness_heatmap", "paper_harness_lift", "paper_harness_model_heatmap",
           "paper_routing_stress", "model_sweep", "static_vs_live", "paper_scan_histogram", "paper_top_violations")


@needs_bwrap
def test_reduced_paper_study_builds_every_figure_and_the_side_by_side_table(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    out = tmp_path / "aces_paper"
    base = [o for o in study_overrides(root_parent=tmp_path) if o not in ("report=false", "skill=custom")]
    with ModelServer(terminus_policy, max_requests=60, idle_timeout=600) as server:
        spec = compose_spec(
            ["study=aces_paper", *base, "model=openai-compatible", "model.name=openai/a",
             f"model.base_url={server.base_url}", "study.harness_models={}", "study.n_attempts=1",
             "study.axes.harnesses=[reference,terminus-2]", "study.axes.stress_harnesses=[reference]",
             "study.axes.stress_sizes=[1,5]", "study.axes.slice_models=['model.name=openai/a','model.name=openai/b']"],
            output_dir=out)
        run_study(spec)
    design = json.loads((out / "design.json").read_text())
    # primary 2 harnesses x 2 workspaces, stress 2 sizes, slice adds openai/b (openai/a is the primary cell)
    assert design["n_members"] == 7 and design["n_trials"] == 14
    assert design["paper_page"] is True  # study=aces_paper asks for the paper page
    slice_arms = [m["arms"] for m in design["members"] if m["model"] == "openai/a" and m["workspace_mode"] == "isolation"]
    assert slice_arms == [["primary", "model_slice"]]
    report = out / "report"
    page = (report / "paper.html").read_text()
    assert REPORTED_LABEL in page
    for name in FIGURES:
        assert (report / "paper" / f"{name}.svg").is_file(), f"{name} was not drawn"
    # Only Fig. 1(b) is not drawn: it needs a Tier 2 (LLM-judge) score, and the heuristic judge rates no rubric.
    assert page.count("not drawn because") == 1, page[page.find("not drawn because") - 200:][:400]
    assert "Fig. 1(b))</strong>: not drawn because no Tier 2" in page
    # One study-level table, every member with its arm; the headline is the primary arm's.
    trials = pd.read_parquet(out / "trials.parquet")
    assert len(trials) == design["n_trials"]
    assert set(trials["arm"]) == {"primary", "group", "routing_stress", "model_slice"}
    key = ["skill", "case_id", "attempt", "harness", "model", "workspace_mode", "decoy_set"]
    p = trials[(trials["arm"] == "primary") & ~trials["negative_control"]]
    d = (p[p["condition"] == "with_skill"].set_index(key)["outcome"]
         - p[p["condition"] == "baseline"].set_index(key)["outcome"]).dropna()
    summary = json.loads((report / "summary.json").read_text())
    head = next(r for r in summary["pooled"] if r["outcome"] == "outcome")
    assert head["n"] == len(d) and abs(head["lift"] - d.mean()) < 1e-12
    assert 'href="paper.html"' in (report / "index.html").read_text()
    table = pd.read_csv(report / "paper" / "side_by_side.csv")
    row = table.set_index("quantity").loc["composite lift"]
    assert row["reported"] == 0.2134 and pd.notna(row["study"])
    assert {"headline", "metric lift", "by harness", "routing stress", "static scan", "top violations",
            "evidence inventory", "missingness", "static vs live"} <= set(table["section"])
    assert table.loc[table["quantity"] == "terminus-2 composite lift", "study"].notna().all()
