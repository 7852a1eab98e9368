"""The sequential gate: boundaries against gsDesign's published values, the betting
e-process against its authors' reference code, the decisions, and the error rates by
simulation (the validity the design promises, checked on distributions it was not built
from: skewed, tied, deterministic, few cases)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aces_bench.stats.betting import capital, plugin_bets, rejects
from aces_bench.stats.boundaries import boundaries, next_boundary, spent
from aces_bench.stats.gate import GateCases, GateSettings, gate_verdict, sign_flip_p
from aces_bench.stats.sequential import LookData, SequentialDesign, analyse
from aces_bench.stats.sequential_sim import DECISIONS, draw_differences, fixed_verdicts, sequential_passes

G05 = GateSettings(threshold=0.05)

EQUAL_5 = [0.2, 0.4, 0.6, 0.8, 1.0]


def test_hsd_boundaries_match_gsdesign():
    # gsDesign (R) gsDesign(k=5, test.type=1, alpha=0.025), default sfHSD gamma=-4: its
    # tests/testthat/_snaps/independent-test-gsBoundSummary.md prints these Z bounds.
    got = boundaries(EQUAL_5, spent("hsd", EQUAL_5, 0.025))
    assert np.round(got, 4).tolist() == [3.2527, 2.9860, 2.6917, 2.3737, 2.0253]


def test_lan_demets_obrien_fleming_boundaries():
    # Lan-DeMets O'Brien-Fleming spending, 5 equal looks, one-sided 0.025 (Jennison &
    # Turnbull 2000, Table 7.x; gsDesign sfLDOF): 4.877, 3.357, 2.680, 2.290, 2.031.
    got = boundaries(EQUAL_5, spent("obf", EQUAL_5, 0.025))
    assert np.round(got, 3).tolist() == [4.877, 3.357, 2.680, 2.290, 2.031]


def test_boundaries_spend_exactly_alpha_by_monte_carlo():
    info = [1, 2, 3.5, 5]
    c = boundaries(info, spent("hsd", np.array(info) / 5, 0.05))
    rng = np.random.default_rng(0)
    incr = rng.normal(size=(400_000, 4)) * np.sqrt(np.diff([0, *info]))
    z = np.cumsum(incr, 1) / np.sqrt(info)
    crossed = (z >= c).any(1).mean()
    assert crossed == pytest.approx(0.05, abs=0.0015)


def test_a_look_with_no_new_spending_has_no_boundary_and_information_must_grow():
    assert next_boundary([1.0], [0.0], []) == math.inf
    with pytest.raises(ValueError, match="information must increase"):
        next_boundary([1.0, 1.0], [0.01, 0.02], [2.3])


# The authors' reference code (confseq 0.0.11, betting_strategies.lambda_predmix_eb and
# betting.betting_mart with theta=1/0, trunc_scale=0.75, m=0.525), run on these values:
X = np.array([0.5, 1.0, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0, 0.5, 1.0])
CONFSEQ_LAMBDA = [5.8800871387, 4.6706171137, 3.4595398918, 2.9644607987, 2.6856519233, 1.9570733016,
                  1.7587970072, 1.6278009369, 1.5336656999, 1.4764218249]
CONFSEQ_LAMBDA_N20 = [1.094665661, 1.5480910241, 1.577581122, 1.6818909097, 1.7974614435, 1.4953026786,
                      1.5004554248, 1.5260491239, 1.5611506205, 1.6166297416]
CONFSEQ_UP = [0.9726333585, 1.632634566, 2.7404937358, 2.6426189595, 0.6606547399, 1.1089561705, 1.8614621434,
              3.1245971692, 3.0130044132, 5.0575431221]
CONFSEQ_DOWN = [1.0273666415, 0.2718995303, 0.0681513364, 0.0708415208, 0.129565413, 0.0375391462, 0.0107843838,
                0.0029670716, 0.0030828727, 0.0007707182]


def test_bets_and_capital_match_the_reference_implementation():
    assert plugin_bets(X, 0.05) == pytest.approx(CONFSEQ_LAMBDA, abs=1e-9)
    assert plugin_bets(X, 0.05, 20) == pytest.approx(CONFSEQ_LAMBDA_N20, abs=1e-9)
    d = 2 * X - 1  # the same values as paired differences in [-1, 1]; threshold 0.05 is m = 0.525
    assert capital(d, 0.05, above=True, alpha=0.05, horizon=20) == pytest.approx(CONFSEQ_UP, abs=1e-9)
    assert capital(d, 0.05, above=False, alpha=0.05, horizon=20) == pytest.approx(CONFSEQ_DOWN, abs=1e-9)


@pytest.mark.parametrize("p_win", [0.525, 0.3])
def test_the_e_process_never_rejects_more_than_alpha_however_often_it_is_looked_at(p_win):
    # The least favourable null for a mean of at most 0.05 on [-1, 1]: only wins (+1) and
    # losses (-1), mean exactly 0.05 (p_win 0.525), or a lower mean (0.3 wins, 0.7 losses).
    rng = np.random.default_rng(1)
    d = np.where(rng.random((20_000, 80)) < p_win, 1.0, -1.0)
    ever = (capital(d, 0.05, above=True, alpha=0.05, horizon=80) >= 20).any(1).mean()
    assert ever <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 20_000)


def test_identical_wins_do_not_fool_the_e_process():
    # Twenty identical +0.1 differences (no variance: a t statistic would be infinite)
    # are no evidence that the mean is above 0.05 when a rare -1 can come next.
    assert not rejects([0.1] * 20, 0.05, above=True, alpha=0.05, horizon=20)
    assert rejects([1.0] * 8, 0.05, above=True, alpha=0.05, horizon=8)


def _mean(values, k: int) -> float | None:
    v = [x for x in list(values)[:k] if x is not None]
    return float(np.mean(v)) if v else None


def _data(design: SequentialDesign, index: int, order: list[str], diffs: dict[str, list], *,
          negatives: dict[str, list] | None = None, null: dict[str, list] | None = None) -> LookData:
    """What the pipeline hands a look (built here from per-attempt differences, as
    ``gate.case_differences`` builds it from a trials table)."""
    look = design.looks()[index]
    k = look.pass_
    in_play = order[: look.n_cases]
    means = [_mean(diffs[c], k) for c in in_play]
    cases = GateCases(skill="s", positive=[m for m in means if m is not None],
                      negative=[m for c in sorted(negatives or {}) if (m := _mean(negatives[c], 10**9)) is not None],
                      null=None if null is None else [m for c in in_play if (m := _mean(null[c], k)) is not None])
    by_pass = [[_mean(diffs[c], b) for c in in_play] for b in range(1, k + 1)]
    return LookData(cases=cases, means=means, firsts=by_pass[0], by_pass=by_pass)


def _run(design: SequentialDesign, diffs: dict[str, list], order: list[str], **extra) -> list:
    out = []
    for i in range(len(design.looks())):
        out.append(analyse(design, i, _data(design, i, order, diffs, **extra), out))
        if out[-1].stopped:
            break
    return out


def test_looks_count_cases_before_attempts():
    d = SequentialDesign(n_cases=20, n_attempts=3, round_cases=5)
    looks = d.looks()
    assert [(lk.pass_, lk.n_cases) for lk in looks] == [(1, 5), (1, 10), (1, 15), (1, 20), (2, 20), (3, 20)]
    assert [lk.final for lk in looks] == [False] * 5 + [True]
    assert looks[3].spending_time == pytest.approx(0.5 + 0.5 / 3)  # pass 1 of 3 attempts, design ICC 0.5
    assert d.schedule()[:2] == [(1, 0, 5, 1), (1, 5, 10, 1)]
    assert SequentialDesign(n_cases=87).per_round == 11
    assert SequentialDesign(n_cases=12).per_round == 5


def test_a_deterministic_winner_stops_early_only_when_the_gate_and_the_exact_guard_agree():
    ids = [f"c{i}" for i in range(40)]
    recs = _run(SequentialDesign(n_cases=40, round_cases=5, gate=G05), {c: [1.0] for c in ids}, ids)
    # Five identical wins: the gate's exact p 0.525^5 = 0.04 is far above what the first
    # look may spend, and the capital 1.68^5 < 20. Ten have the capital, but their exact p,
    # 0.525^10 = 0.0016, is just above the look's level; fifteen pass.
    assert recs[0].decision == "continue" and recs[0].capital_above < 20 and recs[0].gate.verdict == "helps"
    assert recs[1].decision == "continue" and recs[1].capital_above >= 20
    assert recs[-1].decision == "helps" and recs[-1].n_cases == 15
    assert recs[-1].av_lo > 0.05 and recs[-1].av_hi == 1.0  # the anytime-valid interval it stopped with


def test_five_of_five_wins_get_the_gates_verdict_at_the_last_look():
    ids = [f"c{i}" for i in range(5)]
    rec = _run(SequentialDesign(n_cases=5, gate=G05), {c: [1.0] for c in ids}, ids)[-1]
    fixed = gate_verdict(GateCases(skill="s", positive=[1.0] * 5), G05)
    assert rec.index == 0 and rec.gate.p_value == pytest.approx(fixed.p_value) and fixed.p_value <= 0.05
    assert rec.decision == fixed.verdict == "helps"


def test_the_last_look_is_the_gate_with_its_help_test_at_the_remaining_level():
    # 12 cases, 2 attempts: the last look's data are the fixed design's; "helps" needs the
    # gate's p at most the last look's nominal level, the rest of the gate unchanged.
    ids = [f"c{i}" for i in range(12)]
    diffs = {c: [1.0, 1.0] if i < 6 else [0.0, 0.0] for i, c in enumerate(ids)}
    recs = _run(SequentialDesign(n_cases=12, n_attempts=2, round_cases=6), diffs, ids)
    last = recs[-1]
    fixed = gate_verdict(GateCases(skill="s", positive=[1.0] * 6 + [0.0] * 6))
    if last.index == len(SequentialDesign(n_cases=12, n_attempts=2, round_cases=6).looks()) - 1:
        want = fixed.verdict if fixed.verdict != "helps" or fixed.p_value <= last.nominal else "does not reach threshold"
        assert last.decision == want
    assert 0 < last.nominal <= 0.05


def test_one_pair_never_passes():
    rec = _run(SequentialDesign(n_cases=1), {"a": [1.0]}, ["a"])[-1]
    assert rec.decision == "not enough cases" and rec.decision == rec.gate.verdict


def test_a_harmful_skill_stops_as_harmful_and_a_useless_one_does_not_reach_the_threshold():
    ids = [f"c{i}" for i in range(60)]
    rng = np.random.default_rng(3)
    harmful = {c: [float(v)] for c, v in zip(ids, rng.choice([-1.0, 0.0], p=[0.8, 0.2], size=60), strict=True)}
    recs = _run(SequentialDesign(n_cases=60, round_cases=10, gate=G05), harmful, ids)
    assert recs[-1].decision == "harms" and recs[-1].index < 5 and recs[-1].av_hi < 0
    useless = {c: [0.0, 0.0, 0.0] for c in ids}
    noise = {c: [float(rng.choice([-1.0, 0.0, 1.0]))] * 3 for c in ids}
    design = SequentialDesign(n_cases=60, n_attempts=3, round_cases=10, gate=G05)
    last = _run(design, useless, ids)[-1]
    assert last.decision == "not enough cases" and last.index < len(design.looks()) - 1  # futility, at pass 1's end
    assert _run(design, noise, ids)[-1].decision in ("does not reach threshold", "not enough cases")


def test_harm_on_should_not_use_cases_fails_a_helpful_skill_at_its_first_look():
    ids = [f"c{i}" for i in range(12)]
    negatives = {f"n{i}": [-1.0] for i in range(5)}
    rec = _run(SequentialDesign(n_cases=12, round_cases=6), {c: [1.0] for c in ids}, ids, negatives=negatives)[-1]
    assert rec.index == 0 and rec.decision == "harms should-not-use cases" and "should-not-use" in rec.reason
    calm = _run(SequentialDesign(n_cases=12, round_cases=12), {c: [1.0] for c in ids}, ids,
                negatives={"n0": [0.0], "n1": [0.0]})[-1]
    assert calm.decision == "helps" and calm.gate.negative.n_cases == 2


def test_a_null_arm_that_moves_fails_the_skill():
    ids = [f"c{i}" for i in range(12)]
    null = {c: [1.0] for c in ids}  # the baseline run twice disagrees everywhere: the instrument is broken
    rec = _run(SequentialDesign(n_cases=12, round_cases=12), {c: [1.0] for c in ids}, ids, null=null)[-1]
    assert rec.decision == "null arm shows an effect"
    ok = _run(SequentialDesign(n_cases=12, round_cases=12), {c: [1.0] for c in ids}, ids,
              null={c: [0.0] for c in ids})[-1]
    assert ok.decision == "helps" and ok.gate.null.consistent


def test_unscored_pairs_are_left_out_not_counted_as_zero():
    ids = [f"c{i}" for i in range(8)]
    diffs = {c: [1.0] for c in ids}
    diffs["c0"] = [None]
    rec = _run(SequentialDesign(n_cases=8, round_cases=8), diffs, ids)[-1]
    assert rec.n_scored == 7 and rec.estimate == 1.0


def test_the_simulator_makes_the_same_decision_as_the_gate_at_the_same_look():
    rng = np.random.default_rng(5)
    n = 24
    for attempts, gate in ((1, G05), (3, GateSettings())):
        pb = rng.random(n)
        pw = np.clip(pb + rng.normal(0.15, 0.3, n), 0, 1)
        design = SequentialDesign(n_cases=n, n_attempts=attempts, round_cases=6, gate=gate)
        d = draw_differences(pw, pb, attempts, 40, rng)
        seed = 99
        sim = sequential_passes(design, d, np.random.default_rng(seed), fixed=fixed_verdicts(d, gate))
        order = np.argsort(np.random.default_rng(seed).random((40, n)), axis=1)
        for s in range(40):
            ids = [f"c{j}" for j in order[s]]
            recs = _run(design, {f"c{j}": list(d[s, j]) for j in range(n)}, ids)
            assert (DECISIONS[sim.decision[s]], int(sim.stop_look[s])) == (recs[-1].decision, recs[-1].index)


def _null_rate(p_with, p_base, attempts, gate, sims, seed):
    design = SequentialDesign(n_cases=len(p_base), n_attempts=attempts, gate=gate)
    rng = np.random.default_rng(seed)
    d = draw_differences(p_with, p_base, attempts, sims, rng)
    fixed = fixed_verdicts(d, gate)
    return sequential_passes(design, d, rng, fixed=fixed).passed.mean(), fixed.passed.mean()


@pytest.mark.parametrize(("name", "n", "attempts"), [("bimodal", 40, 3), ("tied", 30, 1), ("few", 12, 3),
                                                    ("uniform", 60, 2)])
def test_false_pass_rate_at_the_boundary_null_is_at_most_alpha(name, n, attempts):
    """Case success probabilities whose mean lift is exactly the threshold (0, the gate's
    default: the least favourable null for the one-sided gate): the sequential design may
    pass no more often than alpha, looking after every round."""
    rng = np.random.default_rng(hash(name) % 2**32)
    if name == "bimodal":  # most cases near 0 or 1 in both arms, as agent tasks are
        pb = np.where(rng.random(n) < 0.5, rng.beta(0.3, 5, n), rng.beta(5, 0.3, n))
    elif name == "tied":  # most pairs tie (both arms fail or pass), a few cases move
        pb = np.where(rng.random(n) < 0.5, 0.0, 1.0)
    else:
        pb = rng.random(n)
    lift = rng.normal(0, 0.3, n)
    pw = np.clip(pb + lift, 0, 1)
    # Shift the lift of the cases with room until the mean lift is exactly 0.
    for _ in range(50):
        gap = 0.0 - (pw - pb).mean()
        room = (pw < 1) if gap > 0 else (pw > 0)
        if abs(gap) < 1e-12 or not room.any():
            break
        pw = np.clip(pw + gap * n / room.sum() * room, 0, 1)
    assert (pw - pb).mean() == pytest.approx(0.0, abs=1e-9)
    sims = 1500
    seq, fixed = _null_rate(pw, pb, attempts, GateSettings(), sims, 11)
    se = math.sqrt(0.05 * 0.95 / sims)
    assert seq <= 0.05 + 3 * se, (seq, fixed)


def test_a_strong_effect_passes_with_fewer_trials_than_the_fixed_design():
    rng = np.random.default_rng(8)
    pb = rng.random(60)
    pw = np.clip(pb + 0.35, 0, 1)
    design = SequentialDesign(n_cases=60, n_attempts=3)
    d = draw_differences(pw, pb, 3, 300, rng)
    fixed = fixed_verdicts(d, design.gate)
    res = sequential_passes(design, d, rng, fixed=fixed)
    assert res.passed.mean() >= 0.97 and fixed.passed.mean() >= 0.97
    # 45%: the gate's betting p-values (issue 33) are less extreme than the sign flip's at early looks.
    assert res.trials.mean() < 0.45 * 2 * 60 * 3


def test_a_look_reads_back_exactly_what_it_decided_infinities_included():
    from aces_bench.stats.sequential import LookRecord

    ids = [f"c{i}" for i in range(100)]
    design = SequentialDesign(n_cases=100, round_cases=5, spending="obf")
    rec = analyse(design, 0, _data(design, 0, ids, {c: [1.0] for c in ids}), [])
    assert rec.statistic == math.inf
    assert LookRecord.model_validate_json(rec.model_dump_json()) == rec
    tiny = SequentialDesign(n_cases=1000, round_cases=1, gate=GateSettings(min_cases=1), spending="obf")
    ids = [f"c{i}" for i in range(1000)]
    first = analyse(tiny, 0, _data(tiny, 0, ids, {c: [0.0] for c in ids}), [])
    assert first.boundary == math.inf and LookRecord.model_validate_json(first.model_dump_json()).boundary == math.inf


def test_the_futility_boundary_is_the_conditional_power_one_and_rises_with_information():
    from scipy.stats import norm

    design = SequentialDesign(n_cases=87, n_attempts=3)  # SkillsBench's size: 11 cases a round
    looks = design.looks()
    bounds = [design.futility_bound(lk) for lk in looks]
    # None before half the cases ran, and at the last look (the gate decides there).
    assert [b is None for b in bounds] == [lk.n_cases < 43.5 and lk.pass_ == 1 for lk in looks[:-1]] + [True]
    c, zg = norm.isf(0.05), norm.ppf(0.02)
    for lk, b in zip(looks[:-1], bounds[:-1], strict=True):
        if b is None:
            continue
        s = lk.spending_time
        cp = max(0.0, math.sqrt(s) * (c + math.sqrt(1 - s) * zg))
        assert b == pytest.approx(cp)
        # At the boundary the conditional power under the current trend is futility_power (or z is 0).
        if b > 0:
            assert norm.cdf((b / math.sqrt(s) - c) / math.sqrt(1 - s)) == pytest.approx(0.02)
    ends = [b for lk, b in zip(looks, bounds, strict=True) if lk.pass_end and b is not None]
    assert len(ends) == 2 and 0 < ends[0] < ends[1] < c  # end of pass 1, end of pass 2: rising
    # Without conditional power the rule is the fixed z rule; without either, no futility stop.
    assert SequentialDesign(n_cases=87, n_attempts=3, futility_power=None).futility_bound(looks[-2]) == 0.0
    none = SequentialDesign(n_cases=87, n_attempts=3, futility_power=None, futility_z=None)
    assert all(none.futility_bound(lk) is None for lk in none.looks())


def test_a_weak_trend_stops_for_futility_at_a_pass_end_where_the_z_rule_alone_went_on():
    # 30 cases, 2 attempts: 5 wins, 4 losses, 21 ties on attempt 1: t = 0.33, above 0
    # but below the conditional-power boundary at the end of pass 1 (0.54).
    ids = [f"c{i}" for i in range(30)]
    first = [1.0] * 5 + [-1.0] * 4 + [0.0] * 21
    diffs = {c: [v, v] for c, v in zip(ids, first, strict=True)}
    cp = SequentialDesign(n_cases=30, n_attempts=2, round_cases=30)
    z_only = SequentialDesign(n_cases=30, n_attempts=2, round_cases=30, futility_power=None)
    end1 = cp.looks()[0]
    assert 0 < _run(z_only, diffs, ids)[0].statistic < cp.futility_bound(end1)
    rec = _run(cp, diffs, ids)
    assert len(rec) == 1 and rec[0].decision == "does not reach threshold" and "futility" in rec[0].reason
    assert _run(z_only, diffs, ids)[0].decision == "continue"


def test_a_a_false_pass_stays_at_most_alpha_with_every_look_and_futility_rule_and_a_naive_design_exceeds_it():
    """A/A (both arms the same per-case success probabilities):
    the shipped design, looking after every round, passes at most alpha (plus Monte Carlo
    margin). The same draws gated by the gate at full alpha after every round of pass 1
    (what the sequential rules prevent) pass far more often: the check can fail."""
    rng = np.random.default_rng(2025)
    n, attempts, sims = 40, 3, 1500
    pb = rng.uniform(0.2, 0.8, n)  # few ties: every look has cases to read
    design = SequentialDesign(n_cases=n, n_attempts=attempts, round_cases=5)
    d = draw_differences(pb, pb, attempts, sims, rng)
    fixed = fixed_verdicts(d, design.gate)
    res = sequential_passes(design, d, np.random.default_rng(7), fixed=fixed)
    se = math.sqrt(0.05 * 0.95 / sims)
    assert res.passed.mean() <= 0.05 + 3 * se, res.passed.mean()
    # A sign-flip test at alpha after every round of pass 1, then the gate at the end (the gate's
    # own betting e-value is a test martingale, so peeking at it would not show the inflation).
    naive = np.zeros(400, bool)
    for s in range(400):
        first = d[s, :, 0]
        naive[s] = any(sign_flip_p(first[:k]) <= 0.05 and (first[:k] > 0).sum() >= 5
                       for k in range(5, n + 1, 5)) or bool(fixed.passed[s])
    assert naive.mean() > 0.05 + 3 * math.sqrt(0.05 * 0.95 / 400), naive.mean()


def test_the_merged_e_process_holds_alpha_over_every_pass_where_one_process_per_pass_did_not():
    # A/A with 3 attempts, the least favourable null for "lift <= 0" (each attempt's
    # difference -1, 0 or +1 from two fair coins), 40 cases: the study's one e-process (the
    # passes' processes averaged, read at every case of every pass) reaches 1 / alpha in at
    # most alpha of the studies. The construction it replaces, each pass's own process read
    # at 1 / alpha, exceeds alpha on the same studies (issue 33, item 8).
    from aces_bench.stats.sequential_evidence import merged_path

    rng = np.random.default_rng(3)
    sims, n, attempts = 20_000, 40, 3
    d = (rng.random((sims, n, attempts)) < 0.5).astype(float) - (rng.random((sims, n, attempts)) < 0.5)
    passes = [d[:, :, :b].mean(2) for b in range(1, attempts + 1)]
    merged = (merged_path(passes, 0.0, above=True, alpha=0.05, n_attempts=attempts, horizon=n).max(1) >= 20).mean()
    per_pass = np.zeros(sims, bool)
    for x in passes:
        per_pass |= capital(x, 0.0, above=True, alpha=0.05, horizon=n).max(1) >= 20
    assert merged <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / sims)
    assert per_pass.mean() > 0.05 > merged


def test_the_merged_process_skips_unscored_cases_and_equals_the_betting_capital_without_them():
    from aces_bench.stats.sequential_evidence import capital_path, merged_path

    d = 2 * X - 1
    assert capital_path(d, 0.05, above=True, alpha=0.05, horizon=20) == pytest.approx(CONFSEQ_UP, abs=1e-9)
    assert capital_path(d, 0.05, above=False, alpha=0.05, horizon=20) == pytest.approx(CONFSEQ_DOWN, abs=1e-9)
    gap = np.insert(d, 3, np.nan)  # an unscored case: factor 1, and the bets after it as before
    with_gap = capital_path(gap, 0.05, above=True, alpha=0.05, horizon=20)
    assert with_gap[3] == with_gap[2] and np.delete(with_gap, 3) == pytest.approx(CONFSEQ_UP, abs=1e-9)
    one = merged_path([d], 0.05, above=True, alpha=0.05, n_attempts=1, horizon=20)
    assert one == pytest.approx(CONFSEQ_UP, abs=1e-9)  # one attempt: the one pass's process itself
    with pytest.raises(ValueError, match="1..3 passes"):
        merged_path([d] * 4, 0.05, above=True, alpha=0.05, n_attempts=3, horizon=20)


@pytest.mark.parametrize(("attempts", "effect"), [(3, 0.35), (3, 0.0), (2, -0.3), (1, 0.5)])
def test_a_decision_is_never_shown_beside_an_interval_that_contradicts_it(attempts, effect):
    # Every look of many random studies: an early "helps" has its anytime-valid interval
    # entirely above the threshold, an early "harms" entirely below 0, and a last-look
    # "helps" is shown with the one-sided bound of the test that decided it (issue 33,
    # item 7: "helps" beside [-0.133, +1.000]).
    rng = np.random.default_rng(11)
    n = 18
    pb = rng.random(n) * 0.6
    pw = np.clip(pb + effect + rng.normal(0, 0.2, n), 0, 1)
    design = SequentialDesign(n_cases=n, n_attempts=attempts, round_cases=6, gate=G05)
    ids = [f"c{j}" for j in range(n)]
    seen = set()
    for _ in range(12):
        d = draw_differences(pw, pb, attempts, 1, rng)[0]
        for rec in _run(design, {c: list(d[j]) for j, c in enumerate(ids)}, ids):
            seen.add(rec.decision)
            if rec.decided_lo is not None:
                assert rec.decided_hi - rec.decided_lo > 0  # never a zero-width interval
            if rec.decision == "helps":
                assert rec.decided_lo > design.threshold
                last = rec.index == len(design.looks()) - 1
                assert rec.decided_by.startswith("one-sided") if last else rec.av_lo > design.threshold
            if rec.decision == "harms" and rec.index < len(design.looks()) - 1:
                assert rec.decided_hi < 0 and rec.av_hi < 0
            assert "[" not in rec.reason or "lift >" in rec.reason or "interval [" in rec.reason
    assert seen - {"continue"}  # some study decided
