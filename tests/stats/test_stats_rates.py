"""With-skill process rates: a rate over finished with-skill trials, never a lift."""

from __future__ import annotations

import pytest
from support.stats import frame, trial

from aces_bench.stats.rates import process_rates


def test_rates_count_finished_with_skill_trials_where_the_process_applies():
    t = frame([
        trial(case_id="c1", activated=True, script_ran=True),
        trial(case_id="c2", activated=True, script_ran=False),
        trial(case_id="c3", activated=False, script_ran=None),  # the case names no script
        trial(case_id="c4", activated=True, script_ran=True, status="timeout"),  # unfinished: left out
        trial(case_id="c1", condition="baseline", activated=False, script_ran=False),  # baseline: never counted
        # A negative control that left the skill alone: right not to, and not part of the rate.
        trial(case_id="n1", activated=False, script_ran=False, negative_control=True, case_kind="negative"),
    ])
    rates = process_rates(t).set_index("process")
    assert (rates.loc["activation", "k"], rates.loc["activation", "n"]) == (2, 3)
    assert (rates.loc["script_execution", "k"], rates.loc["script_execution", "n"]) == (1, 2)
    # Wilson 95% for 2/3: (0.2077, 0.9385)
    assert rates.loc["activation", "ci_lo"] == pytest.approx(0.2077, abs=1e-3)
    assert rates.loc["activation", "ci_hi"] == pytest.approx(0.9385, abs=1e-3)


def test_no_with_skill_trial_gives_n_zero_and_no_rate():
    rates = process_rates(frame([trial(condition="baseline")])).set_index("process")
    assert rates.loc["activation", "n"] == 0 and rates.loc["activation", "rate"] is None
