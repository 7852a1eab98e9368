"""Verdict rows and sentences are computed from the numbers they state."""

from __future__ import annotations

from aces_bench.records.gate import GateCases
from aces_bench.records.stats import Correlation
from aces_bench.records.summary import Attribution, LiftRow
from aces_bench.reports.verdict import _status, correlation_sentence, plot_geometry
from aces_bench.stats.gate import gate_verdict


def _row(**over) -> LiftRow:
    base = {"group": {"skill": "s"}, "outcome": "outcome", "n": 6, "n_cases": 6, "mean_with": 0.8, "mean_base": 0.4,
            "lift": 0.4, "ci_lo": 0.1, "ci_hi": 0.7, "adj_ci_lo": 0.05, "adj_ci_hi": 0.75,
            "adjustment": "Bonferroni over 2 groups (97.5% each)", "produced_by": Attribution()}
    base.update(over)
    return LiftRow(**base)


def test_status_is_the_gates_verdict():
    # The verdict column is the gate (issue 22): 5 wins of 5 "helps" with its p, not "no variation", and
    # the interval beside it is the one the verdict was read from (issue 33), never "+0.000" beside a pass.
    helps = gate_verdict(GateCases(skill="s", positive=[1.0] * 5))
    assert _status(helps) == ("helps", "ok", "pass-rate lift +1.000 over 5 case(s): 5 won by more than +0.000, "
                                             "0 lost, 0 other; lift > +0.000: p = 0.03624 <= 0.05; betting interval "
                                             "[+0.069, +1.000] (95% each side)")
    assert _status(gate_verdict(GateCases(skill="s", positive=[-1.0] * 5)))[:2] == ("harms", "bad")
    assert _status(gate_verdict(GateCases(skill="s", positive=[1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, -1.0,
                                                              -1.0])))[:2] == ("does not reach threshold", "warn")
    assert _status(gate_verdict(GateCases(skill="s", positive=[1.0])))[:2] == ("not enough cases", "warn")
    assert _status(None)[0] == "no data"


def test_correlation_sentence_says_what_its_interval_shows():
    def corr(rho, lo, hi, n=12):
        return Correlation(x="score", y="lift", n=n, n_dropped=0, rho=rho, p_value=0.5, ci_lo=lo, ci_hi=hi, level=0.95)

    assert "does not show that the scan predicts lift" in correlation_sentence(corr(0.1, -0.4, 0.6), "Tier 1")
    assert "higher on the scan had higher lift" in correlation_sentence(corr(0.7, 0.2, 0.9), "Tier 1")
    assert "had lower lift" in correlation_sentence(corr(-0.7, -0.9, -0.2), "Tier 1")
    assert "too few for an interval" in correlation_sentence(corr(0.5, None, None, n=3), "Tier 1")


def test_plot_geometry_clips_to_the_axis():
    g = plot_geometry(_row(lift=0.5, ci_lo=-0.2, ci_hi=1.0, adj_ci_lo=-1.0, adj_ci_hi=1.0), width=108)
    assert g["zero"] == 54.0 and g["dot"] == 79.0 and g["alo"] == 4.0 and g["ahi"] == 104.0
    assert plot_geometry(None) is None
