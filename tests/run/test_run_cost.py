"""The cost estimate printed before any trial, and study.max_cost_usd before and during a run.

terminus-2 against the scripted chat server, with a priced litellm model name
(openai/gpt-4o: litellm's cost map has its price), so real usage is what Harbor's
agent results report for the tokens the server counted.
"""

from __future__ import annotations

import json

import pytest
from support.model_server import ModelServer
from support.studies import needs_bwrap, read_table, study_overrides
from support.terminus_policy import terminus_policy

from aces_bench.analysis import build_report
from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import RunError
from aces_bench.run.cost import CostCapReached, Ledger, estimate, model_price
from aces_bench.study.entry import run_study


def _spec(server, tmp_path, *extra):
    return compose_spec(
        ["harness=terminus-2", "model=openai-compatible", "model.name=openai/gpt-4o",
         f"model.base_url={server.base_url}", *study_overrides(root_parent=tmp_path), *extra],
        output_dir=tmp_path / "out",
    )


def test_estimate_uses_litellm_prices(tmp_path):
    price = model_price("openai/gpt-4o")
    assert price is not None and price.model == "gpt-4o" and price.input > 0
    assert model_price("openai/no-such-model") is None
    with ModelServer(terminus_policy) as server:
        spec = _spec(server, tmp_path, "study.expected_input_tokens=1000", "study.expected_output_tokens=100")
    est = estimate(spec, 4)
    assert est.usd == pytest.approx(4 * (1000 * price.input + 100 * price.output))
    assert est.summary("openai/gpt-4o").startswith(
        "study: 4 trial(s) to run; expected 1,000 input + 100 output tokens per trial; estimated cost $")


@needs_bwrap
def test_a_cap_below_the_estimate_refuses_to_start(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    with ModelServer(terminus_policy) as server:
        with pytest.raises(RunError) as err:
            run_study(_spec(server, tmp_path, "study.max_cost_usd=0.01"))
        assert server.requests == []
    # Refused in preflight, before any task is written: the with-skill trial alone passes the cap
    # (issue 36; the refusal used to come after emission, from the job's estimate of both trials).
    assert "the trials no baseline store can supply (1 of 2) are estimated at $0.1" in str(err.value)
    assert "above study.max_cost_usd=$0.0100; nothing was written" in str(err.value)
    assert not (tmp_path / "out" / "tasks").exists()


@needs_bwrap
def test_a_stop_on_pass_study_counts_its_baseline_trials_against_the_cap(tmp_path, monkeypatch):
    # study.stop_on_pass reuses no stored trial (its later attempts depend on the earlier
    # ones), so the baseline always runs: a cap the with-skill trial alone fits under is refused.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    with ModelServer(terminus_policy) as server:
        spec = _spec(server, tmp_path, "study.stop_on_pass=true")
        cap = 1.5 * estimate(spec, 1).usd
        with pytest.raises(RunError) as err:
            run_study(_spec(server, tmp_path, "study.stop_on_pass=true", f"study.max_cost_usd={cap}"))
        assert server.requests == []
    assert "every trial (2 of 2) are estimated at $" in str(err.value)
    assert not (tmp_path / "out" / "tasks").exists()


@needs_bwrap
def test_a_cost_stop_is_tabled_reported_and_not_spent_past_again(tmp_path, monkeypatch):
    """The cap is the study's: after a stop the finished trials are tabled and reported
    (marked as stopped by the cap), and the same command run again spends nothing."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
    out = tmp_path / "out"
    with ModelServer(terminus_policy, max_requests=60) as server:
        spec = _spec(server, tmp_path, "study.max_cost_usd=0.0002", "study.expected_input_tokens=1",
                     "study.expected_output_tokens=1", "study.n_concurrent=1", "study.n_attempts=2")
        with pytest.raises(CostCapReached) as err:
            run_study(spec)
        served = len(server.requests)
        message = str(err.value)
        assert "stopped by study.max_cost_usd=$0.0002" in message and "1 of 4 trial(s) ran" in message, message
        assert "the trials that ran are kept, tabled and reported" in message
        spent = Ledger(out).spent()
        assert spent > 0.0002  # the one trial that ran cost more than the whole cap
        table = read_table(out)
        assert len(table) == 4
        assert (table["status"] == "ok").sum() == 1
        not_run = table.loc[table["status"] != "ok"]
        assert (not_run["status"] == "not_run").all()
        assert not_run["failure_cause"].str.contains("study.max_cost_usd").all()
        assert table["cost_usd"].sum() == pytest.approx(spent)

        with pytest.raises(RunError, match=r"already spent \$0\.\d+ of study.max_cost_usd=\$0\.0002"):
            run_study(spec)
        assert len(server.requests) == served  # the second run spent nothing
    assert Ledger(out).spent() == pytest.approx(spent)
    index = build_report(out)
    summary = json.loads((index.parent / "summary.json").read_text())
    assert summary["stopped_by_cost_cap"].startswith("stopped by study.max_cost_usd=$0.0002")
    assert 'id="cost-stop"' in index.read_text()


def test_cost_by_arm_and_dollars_per_point_of_lift():
    import pandas as pd

    from aces_bench.run.cost import cost_by_arm

    trials = pd.DataFrame({
        "condition": ["with_skill", "with_skill", "baseline", "baseline"],
        "input_tokens": [1000, 3000, 500, 500], "output_tokens": [10, 30, 5, 5],
        "cost_usd": [0.30, 0.50, 0.10, None],
    })
    rows, per_point = cost_by_arm(trials, headline_lift=0.5)
    by = {r["condition"]: r for r in rows}
    assert by["with_skill"] == {"condition": "with_skill", "n_trials": 2, "input_tokens": 4000, "output_tokens": 40,
                                "n_costed": 2, "cost_usd": pytest.approx(0.8), "mean_cost_usd": pytest.approx(0.4),
                                "n_metered": 0, "n_claimed": 0, "n_no_model": 0, "n_usage_mismatch": 0,
                                "usage": "usage: not recorded"}
    assert by["baseline"]["n_costed"] == 1 and by["baseline"]["cost_usd"] == pytest.approx(0.1)
    assert per_point == pytest.approx((0.4 - 0.1) / 50)
    assert cost_by_arm(trials, headline_lift=0.0)[1] is None
    assert cost_by_arm(trials.assign(cost_usd=None), headline_lift=0.5)[1] is None
