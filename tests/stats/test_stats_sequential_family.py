"""Holm across a sequential study's skills (``stats.sequential_family``, issue 33 item 2).

A family of skills that change nothing must read "helps" for at least one skill in at
most alpha of studies, however the skills' designs stopped; a skill whose evidence is
enough alone but not in a family of k must not stop "helps" until the others' decisions
raise its level; and every look says the family and the level it was read at."""

from __future__ import annotations

import numpy as np
import pytest

from aces_bench.stats.boundaries import boundaries
from aces_bench.stats.gate import GateCases, GateSettings
from aces_bench.stats.sequential import LookData, SequentialDesign, look_boundary
from aces_bench.stats.sequential_family import Asked, analyse_family, holm_level


def _ask(design: SequentialDesign, r: int, x: np.ndarray, name: str, history) -> Asked:
    look = design.looks()[r]
    by_pass = [list(x[: look.n_cases, :a].mean(1)) for a in range(1, look.pass_ + 1)]
    data = LookData(cases=GateCases(skill=name, positive=by_pass[-1]), means=by_pass[-1], firsts=by_pass[0],
                    by_pass=by_pass)
    return Asked(design, r, data, history)


def run_family(diffs: dict[str, np.ndarray], settings: GateSettings, *, round_cases: int | None = None):
    """Every skill's looks, round by round, as the sequential runner makes them (each skill's
    ``diffs``: cases x attempts of paired differences, in scheduled order)."""
    n, big_a = next(iter(diffs.values())).shape
    design = SequentialDesign(n_cases=n, n_attempts=big_a, gate=settings, round_cases=round_cases)
    history: dict[str, list] = {name: [] for name in diffs}
    decided: dict[str, str] = {}
    for r in range(len(design.looks())):
        asked = {name: _ask(design, r, x, name, list(history[name])) for name, x in diffs.items()
                 if name not in decided}
        looks = analyse_family(asked, settings, k=len(diffs),
                               helped=sum(v == "helps" for v in decided.values()),
                               harmed=sum(v == "harms" for v in decided.values()))
        for name, rec in looks.items():
            history[name].append(rec)
            if rec.stopped:
                decided[name] = rec.decision
    return history


def _aa_family(rng: np.random.Generator, k: int, n: int, attempts: int) -> dict[str, np.ndarray]:
    """k skills that change nothing: per case a pass probability, both arms drawn from it."""
    out = {}
    for i in range(k):
        q = rng.uniform(0.1, 0.9, n)[:, None]
        out[f"s{i}"] = (rng.random((n, attempts)) < q).astype(float) - (rng.random((n, attempts)) < q).astype(float)
    return out


def test_a_ten_skill_aa_family_reads_helps_for_some_skill_in_at_most_alpha_of_studies():
    # The same simulated families gated per skill (family none) and with Holm: unadjusted,
    # some skill of ten reads "helps" well above alpha; with Holm at most alpha. Seeded: 150
    # families of 10 skills, 20 cases x 2 attempts (about a minute).
    rng = np.random.default_rng(33)
    families = [_aa_family(rng, 10, 20, 2) for _ in range(150)]

    def false_helps(family: str) -> int:
        s = GateSettings(family=family)
        return sum(any(h[-1].decision == "helps" for h in run_family(f, s).values()) for f in families)

    holm, none = false_helps("holm"), false_helps("none")
    assert holm <= 0.05 * len(families)
    assert none > holm  # the unadjusted family is what Holm protects against


def test_a_skill_enough_alone_waits_for_its_holm_level_and_the_step_down_raises_it():
    # Skill "strong" wins every case; "fair" wins 9 of its first 10 cases and ties the rest.
    # Alone (family none) fair passes early; in a family of 3 with one useless skill, it is
    # read at alpha / 3, then at alpha / 2 once strong is decided "helps" in the same round.
    n = 20
    strong = np.ones((n, 1))
    fair = np.array([[1.0]] * 9 + [[0.0]] + [[1.0]] * 10)
    useless = np.zeros((n, 1))
    alone = run_family({"fair": fair}, GateSettings(family="none"), round_cases=5)["fair"]
    fam = run_family({"strong": strong, "fair": fair, "useless": useless}, GateSettings(), round_cases=5)
    assert fam["strong"][-1].decision == "helps"
    assert fam["strong"][0].level == pytest.approx(0.05 / 3) and fam["strong"][0].family == "Holm over 3 skills"
    first_strong = len(fam["strong"]) - 1
    # At the round strong stops, fair was asked again at the raised level alpha / 2.
    assert fam["fair"][first_strong].level == pytest.approx(0.05 / 2)
    assert alone[-1].decision == "helps" and alone[-1].level == pytest.approx(0.05)
    # Alone it stops "helps" at its second look (p under that look's nominal level 0.0049);
    # in the family the same look's boundary, spent at alpha / 2, is 0.0024: it waits a look.
    assert len(alone) == 2 and len(fam["fair"]) == 3 and fam["fair"][1].decision == "continue"
    assert fam["fair"][-1].decision == "helps" and "(Holm over 3 skills)" in fam["fair"][-1].reason


def test_a_futility_stop_keeps_its_share_and_none_is_labelled_unadjusted():
    s = GateSettings()
    assert holm_level(s, 10, 0) == pytest.approx(0.005) and holm_level(s, 10, 9) == pytest.approx(0.05)
    assert holm_level(GateSettings(family="none"), 10, 0) == 0.05
    looks = run_family({"a": np.zeros((10, 1)), "b": np.zeros((10, 1))}, GateSettings(family="none"))
    assert looks["a"][0].family == "none: each of 2 skills at 0.05, unadjusted"


def test_the_boundaries_at_a_raised_level_are_that_levels_design_from_the_first_look():
    # Looks made at alpha / 2; a look asked at alpha recomputes the whole path at alpha, so
    # its boundary is the design-at-alpha one (the Maurer-Bretz update), not a mix.
    n = 40
    x = np.ones((n, 1))
    x[::2] = 0.0
    d = SequentialDesign(n_cases=n, round_cases=10)
    half = d.model_copy(update={"gate": d.gate.model_copy(update={"alpha": 0.025})})
    history = run_family({"s": x}, GateSettings(alpha=0.025, family="none"), round_cases=10)["s"][:2]
    infos = [lk.n_cases / n for lk in d.looks()[:3]]
    _, _, c = look_boundary(d, 2, None, history)
    want = boundaries(infos, [d.spent(lk.spending_time) for lk in d.looks()[:3]])[-1]
    assert c == pytest.approx(want, abs=1e-6)
    _, _, c_half = look_boundary(half, 2, None, history)
    assert c_half > c
