"""The page never contradicts itself (issue 33, item 7): no zero-width interval, analysed
pairs never more than scheduled, every exclusion sentence with its number, and pairs the
design chose not to run counted apart, never as exclusions with worst-case bounds."""

from __future__ import annotations

import pytest
from support.page_checks import page_defects
from support.stats import frame, trial

from aces_bench.analysis.summary import intention_to_treat
from aces_bench.records.summary import IntentionToTreat
from aces_bench.stats.summary import study_stats
from reports.verdict import exclusion_reasons


def test_the_checker_finds_each_defect_the_issue_saw():
    assert page_defects("CI [+0.667, +0.667] here")
    assert page_defects('pairs analysed</div>\n  <div class="big">16 / 12</div>')
    assert page_defects("6 of 18 pairs are excluded ( trial(s)); were every")
    assert not page_defects('[+0.100, +0.300] pairs analysed</div><div class="big">12 / 12</div> '
                            "2 of 18 pairs are excluded (2 never run trial(s))")


def test_every_page_of_the_synthetic_study_is_consistent(report_dir):
    pages = sorted(report_dir.rglob("*.html"))
    assert pages
    found = {p.name: page_defects(p.read_text()) for p in pages}
    assert not {k: v for k, v in found.items() if v}


def _study(*, skipped_cases=(), negatives=2, excluded=()):
    rows = []
    for c in range(6):
        for cond in ("with_skill", "baseline"):
            status = "skipped" if c in skipped_cases else "infra_error" if (c, cond) in excluded else "ok"
            ran = status == "ok"
            value = (1.0 if cond == "with_skill" else float(c % 2)) if ran else None
            rows.append(trial(case_id=f"c{c}", condition=cond, attempt=1, status=status, outcome=value,
                              outcome_per_protocol=value, composite=value, reward=value, final_pass=value))
    for c in range(negatives):  # should-not-use cases: not in the headline's pairs
        for cond in ("with_skill", "baseline"):
            rows.append(trial(case_id=f"n{c}", case_kind="negative", negative_control=True, condition=cond,
                              attempt=1, status="ok", outcome=1.0, outcome_per_protocol=1.0, composite=1.0,
                              reward=1.0, final_pass=1.0))
    return frame(rows)


def test_analysed_never_exceeds_scheduled_with_should_not_use_cases_in_the_study():
    t = _study(negatives=4)
    a = intention_to_treat(t, study_stats(t))
    assert (a.n_analysed, a.n_pair_keys, a.n_excluded) == (6, 6, 0)


def test_pairs_not_run_by_design_are_their_own_count_never_exclusions_or_bounds():
    t = _study(skipped_cases=(4, 5))
    a = intention_to_treat(t, study_stats(t))
    assert (a.n_pair_keys, a.n_analysed, a.n_excluded, a.n_not_run_by_design) == (4, 4, 0, 2)
    # the worst case is over nothing: the lift of the pairs that ran, not one with the
    # unrun pairs imputed as failures
    assert a.lift_worst_case == pytest.approx(a.lift) == pytest.approx(0.5)


def test_a_real_exclusion_keeps_its_worst_case_and_its_number():
    t = _study(skipped_cases=(5,), excluded=((0, "with_skill"),))
    a = intention_to_treat(t, study_stats(t))
    assert (a.n_pair_keys, a.n_analysed, a.n_excluded, a.n_not_run_by_design) == (5, 4, 1, 1)
    assert a.lift_worst_case < a.lift
    assert exclusion_reasons(a) == "1 infrastructure (after retries) trial(s)"


def test_an_exclusion_with_no_trial_reason_still_says_how_many():
    a = IntentionToTreat(n_pair_keys=18, n_analysed=12, n_excluded=6)
    assert exclusion_reasons(a) == "6 pair(s) with a side that has no graded trial"
    assert not page_defects(f"6 of 18 pairs are excluded ({exclusion_reasons(a)})")
