"""The sequential gate: case rounds, the gate's own e-value read at every look (the
property its type I error rests on, checked on random data), the decisions, the futility
rule, and the error rates by simulation (the validity the design promises, checked on
distributions it was not built from: skewed, tied, deterministic, few cases)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateCases
from aces_bench.records.sequential import LookRecord, SequentialDesign
from aces_bench.stats.betting import log_evalue
from aces_bench.stats.gate import gate_verdict, help_p, sign_flip_p
from aces_bench.stats.sequential import analyse, conditional_power
from aces_bench.stats.sequential_sim import DECISIONS, draw_differences, fixed_verdicts, sequential_passes

G05 = GateSettings(threshold=0.05)


def _mean(values) -> float | None:
    v = [x for x in values if x is not None]
    return float(np.mean(v)) if v else None


def _cases(design: SequentialDesign, index: int, order: list[str], diffs: dict[str, list], *,
           negatives: dict[str, list] | None = None, null: dict[str, list] | None = None) -> GateCases:
    """What the pipeline hands a look (built here from per-attempt differences, as
    ``gate.skill_cases`` builds it from the trials so far): the cases of the rounds so
    far, each with every attempt."""
    in_play = order[: design.looks()[index].n_cases]
    return GateCases(skill="s", positive=[m for c in in_play if (m := _mean(diffs[c])) is not None],
                     negative=[m for c in sorted(negatives or {}) if (m := _mean(negatives[c])) is not None],
                     null=None if null is None else [m for c in in_play if (m := _mean(null[c])) is not None])


def _run(design: SequentialDesign, diffs: dict[str, list], order: list[str], **extra) -> list[LookRecord]:
    out: list[LookRecord] = []
    for i in range(len(design.looks())):
        out.append(analyse(design, i, _cases(design, i, order, diffs, **extra), out))
        if out[-1].stopped:
            break
    return out


def test_rounds_add_new_cases_with_every_attempt():
    d = SequentialDesign(n_cases=23, n_attempts=3, round_cases=5)
    assert [lk.n_cases for lk in d.looks()] == [5, 10, 15, 20, 23]
    assert [lk.final for lk in d.looks()] == [False] * 4 + [True]
    assert d.schedule() == [(0, 5), (5, 10), (10, 15), (15, 20), (20, 23)]
    assert SequentialDesign(n_cases=87).per_round == 11
    assert SequentialDesign(n_cases=12).per_round == 2 and SequentialDesign(n_cases=6).per_round == 1
    assert [d.futility_at(lk) for lk in d.looks()] == [False, True, True, True, False]  # from 25% of the cases


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from([-1.0, 0.0, 1.0]), min_size=3, max_size=3), min_size=1, max_size=30),
       st.integers(1, 9), st.sampled_from([0.0, 0.05, 0.2]), st.randoms(use_true_random=False))
def test_every_look_reads_the_gates_own_e_value_on_the_cases_so_far(attempts, per_round, threshold, rnd):
    # The type I error argument (docs/sequential.md): a look's help p-value is the gate's,
    # 1 / E with E the betting e-value of the cases of the rounds so far (each with all its
    # attempts), whatever their order; E is a product of one factor per case, so the looks
    # read one supermartingale along the case order; and the last look is the fixed design.
    ids = [f"c{i}" for i in range(len(attempts))]
    diffs = dict(zip(ids, attempts, strict=True))
    order = list(ids)
    rnd.shuffle(order)
    gate = GateSettings(threshold=threshold, min_cases=1)
    design = SequentialDesign(n_cases=len(ids), n_attempts=3, round_cases=per_round, gate=gate, futility_power=None)
    means = [float(np.mean(diffs[c])) for c in order]
    recs = _run(design, diffs, order)
    for rec in recs:
        seen = means[: rec.n_cases]
        assert rec.p_value == pytest.approx(help_p(seen, threshold), rel=1e-12)
        assert rec.p_value == pytest.approx(min(1.0, math.exp(-log_evalue(seen, threshold, above=True))), rel=1e-12)
        assert rec.p_value == pytest.approx(help_p(sorted(seen), threshold), rel=1e-9)  # order-free
        assert rec.decision != "helps" or rec.p_value <= design.alpha
    if len(recs) == len(design.looks()):  # ran to the last look: exactly the fixed design's verdict
        fixed = gate_verdict(GateCases(skill="s", positive=means), gate)
        assert (recs[-1].decision, recs[-1].p_value) == (fixed.verdict, pytest.approx(fixed.p_value))
    else:  # stopped early: only on a verdict the gate reads as it stands
        assert recs[-1].decision in ("helps", "harms") and recs[-1].decision == recs[-1].gate.verdict


def test_reading_the_e_value_at_every_case_keeps_alpha_where_a_sign_flip_test_at_every_look_does_not():
    # A/A with 3 attempts, the least favourable null for "lift <= 0" (each attempt's
    # difference -1, 0 or +1 from two fair coins), 60 cases: the gate's e-value read after
    # every single case (more looks than any design makes) reaches 1 / alpha in at most
    # alpha of the studies (Ville). The gate's old sign-flip test read at each of 12 looks
    # exceeds alpha on the same studies: the check can fail.
    from aces_bench.stats.betting import MIX_BETS, log_factors

    rng = np.random.default_rng(3)
    sims, n = 20_000, 60
    x = ((rng.random((sims, n, 3)) < 0.5).astype(float) - (rng.random((sims, n, 3)) < 0.5)).mean(2)
    caps = np.stack([np.cumsum(log_factors(x, 0.0, c, above=True), 1) + math.log(w) for c, w in MIX_BETS])
    ever = (np.logaddexp.reduce(caps, 0) >= math.log(20)).any(1).mean()
    assert ever <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / sims), ever
    naive = np.array([any(sign_flip_p(row[:k]) <= 0.05 for k in range(5, n + 1, 5)) for row in x[:600]])
    assert naive.mean() > 0.05 + 3 * math.sqrt(0.05 * 0.95 / 600), naive.mean()


def test_five_deterministic_wins_pass_at_the_first_look_at_thresholds_0_and_0_05():
    ids = [f"c{i}" for i in range(40)]
    for gate in (GateSettings(), G05):
        recs = _run(SequentialDesign(n_cases=40, n_attempts=3, round_cases=5, gate=gate), {c: [1.0] * 3 for c in ids},
                    ids)
        assert len(recs) == 1 and recs[0].decision == "helps" and recs[0].p_value <= 0.05
        assert recs[0].decided_lo >= gate.threshold and recs[0].decided_by.startswith("anytime-valid")
    four = _run(SequentialDesign(n_cases=4, gate=G05), {f"c{i}": [1.0] for i in range(4)}, [f"c{i}" for i in range(4)])
    assert four[-1].decision == "not enough cases"  # fewer than 5 cases won never passes


def test_one_pair_never_passes():
    rec = _run(SequentialDesign(n_cases=1), {"a": [1.0]}, ["a"])[-1]
    assert rec.decision == "not enough cases" and rec.decision == rec.gate.verdict


def test_a_harmful_skill_stops_as_harmful_and_a_useless_one_stops_for_futility():
    ids = [f"c{i}" for i in range(60)]
    rng = np.random.default_rng(3)
    harmful = {c: [float(v)] for c, v in zip(ids, rng.choice([-1.0, 0.0], p=[0.8, 0.2], size=60), strict=True)}
    recs = _run(SequentialDesign(n_cases=60, round_cases=10, gate=G05), harmful, ids)
    assert recs[-1].decision == "harms" and recs[-1].index < 5 and recs[-1].decided_hi < 0
    design = SequentialDesign(n_cases=60, n_attempts=3, round_cases=10, gate=G05)
    last = _run(design, {c: [0.0, 0.0, 0.0] for c in ids}, ids)[-1]
    assert last.decision == "not enough cases" and last.index == 1  # the first look at 25% of the cases
    assert "futility stop" in last.reason and last.conditional_power == 0.0
    noise = {c: [float(rng.choice([-1.0, 0.0, 1.0]))] * 3 for c in ids}
    assert _run(design, noise, ids)[-1].decision in ("does not reach threshold", "not enough cases")


def test_harm_on_should_not_use_cases_fails_a_helpful_skill_at_its_first_look():
    ids = [f"c{i}" for i in range(12)]
    negatives = {f"n{i}": [-1.0] for i in range(5)}
    rec = _run(SequentialDesign(n_cases=12, round_cases=6), {c: [1.0] for c in ids}, ids, negatives=negatives)[-1]
    assert rec.index == 0 and rec.decision == "harms should-not-use cases" and "should-not-use" in rec.reason
    calm = _run(SequentialDesign(n_cases=12, round_cases=12), {c: [1.0] for c in ids}, ids,
                negatives={"n0": [0.0], "n1": [0.0]})[-1]
    assert calm.decision == "helps" and calm.gate.negative.n_cases == 2


def test_a_null_arm_that_moves_fails_the_skill_and_stops_nothing_early():
    ids = [f"c{i}" for i in range(12)]
    null = {c: [1.0] for c in ids}  # the baseline run twice disagrees everywhere: the instrument is broken
    recs = _run(SequentialDesign(n_cases=12, round_cases=6, futility_power=None), {c: [1.0] for c in ids}, ids,
                null=null)
    assert [r.decision for r in recs] == ["continue", "null arm shows an effect"]
    ok = _run(SequentialDesign(n_cases=12, round_cases=12), {c: [1.0] for c in ids}, ids,
              null={c: [0.0] for c in ids})[-1]
    assert ok.decision == "helps" and ok.gate.null.consistent


def test_unscored_pairs_are_left_out_not_counted_as_zero():
    ids = [f"c{i}" for i in range(8)]
    diffs = {c: [1.0] for c in ids}
    diffs["c0"] = [None]
    rec = _run(SequentialDesign(n_cases=8, round_cases=8), diffs, ids)[-1]
    assert rec.n_scored == 7 and rec.estimate == 1.0


def test_conditional_power_follows_the_trend_and_matches_simulation():
    # A trend that passes long before the end: about 1; all ties: 0 (a tie multiplies the
    # capital by 1, and 0.5 of it is far below 20); nothing left to read: whether E is there.
    assert conditional_power([1.0, 0.0, 1.0, 0.0, 1.0] * 4, 60, 0.0, 0.05) > 0.99
    assert conditional_power([0.0] * 20, 60, 0.0, 0.05) == 0.0
    assert conditional_power([1.0] * 5, 0, 0.0, 0.05) == 1.0 and conditional_power([1.0] * 4, 0, 0.0, 0.05) == 0.0
    # A middling trend: the normal approximation against resampling the cases seen.
    rng = np.random.default_rng(7)
    seen = rng.choice([-1.0, -1 / 3, 0.0, 1 / 3, 2 / 3, 1.0], p=[0.1, 0.1, 0.45, 0.15, 0.1, 0.1], size=22)
    cp = conditional_power(seen, 65, 0.0, 0.05)
    future = rng.choice(seen, size=(2000, 65))
    sim = np.mean([log_evalue(np.concatenate([seen, f]), 0.0, above=True) >= math.log(20) for f in future])
    assert 0.2 < sim < 0.8 and cp == pytest.approx(sim, abs=0.06)


def test_a_harm_lean_makes_a_futility_stop_wait():
    # 30 cases, a lift leaning below 0 (harm p <= harm_alpha 0.2 but above alpha): futility
    # would print a milder word than the gate's "harms" at the end; the look goes on.
    ids = [f"c{i}" for i in range(30)]
    diffs = {c: [v] for c, v in zip(ids, [-1.0] * 4 + [0.0] * 24 + [1.0] * 2, strict=True)}
    design = SequentialDesign(n_cases=30, round_cases=15)
    recs = _run(design, diffs, ids)
    first = recs[0]
    assert first.gate.p_harm is not None and 0.05 < first.gate.p_harm <= 0.2 and (first.estimate or 0) < 0
    assert first.decision == "continue" and first.conditional_power < 0.02


def test_the_simulator_makes_the_same_decision_as_the_gate_at_the_same_look():
    rng = np.random.default_rng(5)
    n = 30
    for attempts, gate, shift in ((1, G05, 0.15), (3, GateSettings(), 0.15), (3, GateSettings(), 0.0),
                                  (2, GateSettings(), -0.2)):
        pb = rng.random(n)
        pw = np.clip(pb + rng.normal(shift, 0.3, n), 0, 1)
        design = SequentialDesign(n_cases=n, n_attempts=attempts, round_cases=5, gate=gate)
        d = draw_differences(pw, pb, attempts, 40, rng)
        seed = 99
        sim = sequential_passes(design, d, np.random.default_rng(seed), fixed=fixed_verdicts(d, gate))
        order = np.argsort(np.random.default_rng(seed).random((40, n)), axis=1)
        for s in range(40):
            ids = [f"c{j}" for j in order[s]]
            recs = _run(design, {f"c{j}": list(d[s, j]) for j in range(n)}, ids)
            assert (DECISIONS[sim.decision[s]], int(sim.stop_look[s])) == (recs[-1].decision, recs[-1].index)
            assert sim.trials[s] == 2 * attempts * recs[-1].n_cases


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
    assert res.passed.mean() >= fixed.passed.mean() >= 0.97  # the last look is the fixed design: no power lost
    assert res.trials.mean() < 0.45 * 2 * 60 * 3


def test_a_look_reads_back_exactly_what_it_decided():
    ids = [f"c{i}" for i in range(100)]
    design = SequentialDesign(n_cases=100, round_cases=5)
    rec = analyse(design, 0, _cases(design, 0, ids, {c: [1.0] for c in ids}), [])
    assert LookRecord.model_validate_json(rec.model_dump_json()) == rec


@pytest.mark.parametrize(("attempts", "effect"), [(3, 0.35), (3, 0.0), (2, -0.3), (1, 0.5)])
def test_a_decision_is_never_shown_beside_an_interval_that_contradicts_it(attempts, effect):
    # Every look of many random studies: "helps" has the interval it was read from (the
    # gate's, anytime-valid) at or above the threshold, "harms" below 0 (issue 33, item 7:
    # "helps" beside [-0.133, +1.000]).
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
                assert f"[{rec.decided_lo:+.3f}, {rec.decided_hi:+.3f}]" in rec.reason
            if rec.decision == "helps":
                assert rec.decided_lo >= design.threshold
            if rec.decision == "harms":
                assert rec.decided_hi < 0
    assert seen - {"continue"}  # some study decided


def test_a_skill_that_can_no_longer_pass_stops_at_once_and_one_that_can_goes_on():
    # 5 cases, rounds of 1: after two ties only 3 cases remain, so 5 cases won is out of
    # reach: the fixed design's word, "not enough cases", after 2 cases instead of 5 (after
    # 1, no trend is read yet: "harms" could still be the last look's word).
    ids = [f"c{i}" for i in range(5)]
    recs = _run(SequentialDesign(n_cases=5, n_attempts=2), {c: [0.0, 0.0] for c in ids}, ids)
    assert [r.decision for r in recs] == ["continue", "not enough cases"]
    assert "no outcome of the 3 case(s) still to run" in recs[-1].reason
    # A harmful skill (the known-effect suite's: a tie, then losses) can no longer pass after
    # 2 cases, but the trend says "harms" at the last look: it waits and reads "harms" there.
    harmful = {c: [0.0 if i == 0 else -1.0] for i, c in enumerate(ids + ["c5"])}
    recs = _run(SequentialDesign(n_cases=6), harmful, ids + ["c5"])
    assert [r.decision for r in recs] == ["continue"] * 5 + ["harms"]
    # 12 cases, rounds of 6: 3 wins and 3 losses (lift 0, no harm) leave the e-value below
    # 1 / alpha even if all 6 others are won outright (a loss keeps 2% or 10% of the
    # capital), though 5 cases won is still within reach; the trend rule is off here.
    many = [f"c{i}" for i in range(12)]
    mixed = {c: [1.0 if i % 2 else -1.0] for i, c in enumerate(many[:6])} | {c: [1.0] for c in many[6:]}
    first = _run(SequentialDesign(n_cases=12, round_cases=6, futility_from=1.0), mixed, many)[0]
    assert first.decision == "not enough cases" and "no outcome of the 6 case(s)" in first.reason
    # Still possible: one tie, then wins: it runs on and passes at its last look.
    six = [f"c{i}" for i in range(6)]
    d = {c: [1.0] for c in six}
    d["c0"] = [0.0]
    recs = _run(SequentialDesign(n_cases=6, futility_power=None), d, six)
    assert [r.decision for r in recs] == ["continue"] * 5 + ["helps"]
