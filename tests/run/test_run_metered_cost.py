"""Where a trial's spend comes from: the metering record when there is one, the harness's
claim otherwise, and nothing at all for the reference agent (never a measured $0)."""

from __future__ import annotations

import pandas as pd
import pytest
from harbor.models.trial.result import TrialResult
from support.grading import trial_result

from aces_bench.core.metering import METER_FILE, metered_call
from aces_bench.run.cost import CLAIMED, METERED, NO_MODEL, cost_by_arm, spend_entry, trial_cost, trial_spend

SSE = ('data: {"type":"message_start","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":1000}}}\n'
       'data: {"type":"message_delta","usage":{"output_tokens":50}}\n')


def _result(tmp_path, *, claimed: list[dict] | None, metered_calls: int | None, reference: bool = False) -> TrialResult:
    data = trial_result("t", "trial-1", 1.0)
    trial_dir = tmp_path / "trial-1"
    trial_dir.mkdir()
    data["trial_uri"] = trial_dir.as_uri()
    meta = {"aces_usage": claimed} if claimed is not None else {}
    if reference:
        meta = {"aces_reference": {"outcome": "skill"}, "aces_usage": []}
    data["agent_result"] = {"n_input_tokens": 0, "n_output_tokens": 0, "metadata": meta}
    if metered_calls is not None:
        call = metered_call(method="POST", path="/v1/messages", body={"model": "x"}, status=200, response=SSE)
        (trial_dir / METER_FILE).write_text("".join(call.model_dump_json() + "\n" for _ in range(metered_calls)))
    return TrialResult.model_validate(data)


@pytest.mark.parametrize("claimed_tokens", [0, 2_000_000_000])
def test_a_metered_trial_costs_what_the_provider_reported_whatever_the_harness_claims(tmp_path, claimed_tokens):
    result = _result(tmp_path, claimed=[{"model": "claude-sonnet-4-5", "input_tokens": claimed_tokens}],
                     metered_calls=2)
    spend = trial_spend(result)
    assert spend.source == METERED and [(u.input_tokens, u.output_tokens) for u in spend.usage] == [(2000, 100)]
    assert spend.claimed[0].input_tokens == claimed_tokens
    assert spend.mismatch.startswith(f"usage mismatch: the harness's own record says input {claimed_tokens:,} claimed")
    assert trial_cost(result) == pytest.approx(2000 * 3e-6 + 100 * 15e-6)
    entry = spend_entry(result, trial="j/t", member=".", model=None)
    assert (entry.input_tokens, entry.source, entry.known) == (2000, METERED, True)
    assert entry.usage_mismatch == spend.mismatch


def test_a_metered_trial_with_no_call_spent_a_measured_zero(tmp_path):
    result = _result(tmp_path, claimed=[{"model": "claude-sonnet-4-5", "input_tokens": 500}], metered_calls=0)
    assert trial_cost(result) == 0.0 and trial_spend(result).mismatch is not None
    assert spend_entry(result, trial="j/t", member=".", model=None).known


def test_without_a_metering_point_the_claim_is_used_and_said_to_be_one(tmp_path):
    result = _result(tmp_path, claimed=[{"model": "claude-sonnet-4-5", "input_tokens": 1000}], metered_calls=None)
    spend = trial_spend(result)
    assert (spend.source, spend.mismatch) == (CLAIMED, None)
    assert trial_cost(result) == pytest.approx(1000 * 3e-6)


def test_the_reference_agent_has_no_usage_rather_than_zero_dollars(tmp_path):
    result = _result(tmp_path, claimed=None, metered_calls=None, reference=True)
    assert trial_spend(result).source == NO_MODEL and trial_cost(result) is None
    rows, _ = cost_by_arm(pd.DataFrame({"condition": ["baseline"], "input_tokens": [0], "output_tokens": [0],
                                        "cost_usd": [None], "usage_source": [NO_MODEL]}), None)
    assert rows[0]["usage"] == "usage: no model calls (reference agent)" and rows[0]["cost_usd"] is None


def test_cost_by_arm_says_which_trials_were_metered_and_flagged():
    trials = pd.DataFrame({"condition": ["with_skill"] * 3, "input_tokens": [10, 10, 10], "output_tokens": [1, 1, 1],
                           "cost_usd": [0.1, 0.1, 0.1], "usage_source": [METERED, METERED, CLAIMED],
                           "usage_mismatch": [True, False, None]})
    row = cost_by_arm(trials, None)[0][0]
    assert (row["n_metered"], row["n_claimed"], row["n_usage_mismatch"]) == (2, 1, 1)
    assert row["usage"] == "usage: 2 metered, 1 harness claim (not metered); 1 usage mismatch(es) flagged"
