"""Holm across a sequential study's skills (``stats.sequential_family``, issue 33 item 2).

A family of skills that change nothing must read "helps" for at least one skill in at
most alpha of studies, however the skills' designs stopped; a skill whose evidence is
enough alone but not in a family of k must not stop "helps" until the others' decisions
raise its level; and every look says the family and the level it was read at."""

from __future__ import annotations

import numpy as np
import pytest

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateCases
from aces_bench.records.sequential import SequentialDesign
from aces_bench.stats.sequential_family import Asked, analyse_family, holm_level


def _ask(design: SequentialDesign, r: int, x: np.ndarray, name: str, history) -> Asked:
    """The cases of the rounds so far, each with every attempt (case rounds)."""
    return Asked(design, r, GateCases(skill=name, positive=list(x[: design.looks()[r].n_cases].mean(1))), history)


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
    # Skill "strong" wins every case; "fair" wins its first 5 cases, half of the 6th and
    # ties the rest (2 attempts). Alone (family none) fair passes at its first look (e-value
    # 27.6 >= 1 / 0.05); in a family of 3 with one useless skill it is read at alpha / 3
    # (needs 60), and at alpha / 2 (needs 40) once strong is decided "helps" in the same
    # round, where its e-value is 40.6.
    n = 20
    strong = np.ones((n, 2))
    fair = np.array([[1.0, 1.0]] * 5 + [[1.0, 0.0]] + [[0.0, 0.0]] * 14)
    useless = np.zeros((n, 2))
    alone = run_family({"fair": fair}, GateSettings(family="none"), round_cases=5)["fair"]
    fam = run_family({"strong": strong, "fair": fair, "useless": useless}, GateSettings(), round_cases=5)
    assert alone[-1].decision == "helps" and alone[-1].level == pytest.approx(0.05) and len(alone) == 1
    assert fam["strong"][0].level == pytest.approx(0.05 / 3) and fam["strong"][0].family == "Holm over 3 skills"
    assert [r.decision for r in fam["strong"]] == ["continue", "helps"]
    assert fam["fair"][0].decision == "continue" and fam["fair"][0].p_value == pytest.approx(1 / 27.6, rel=0.01)
    assert fam["fair"][1].decision == "helps" and fam["fair"][1].level == pytest.approx(0.05 / 2)
    assert 1 / 60 < fam["fair"][1].p_value <= 0.025 and "(Holm over 3 skills)" in fam["fair"][1].reason
    assert fam["useless"][-1].decision == "not enough cases"  # futility: its share stays counted


def test_a_futility_stop_keeps_its_share_and_none_is_labelled_unadjusted():
    s = GateSettings()
    assert holm_level(s, 10, 0) == pytest.approx(0.005) and holm_level(s, 10, 9) == pytest.approx(0.05)
    assert holm_level(GateSettings(family="none"), 10, 0) == 0.05
    looks = run_family({"a": np.zeros((10, 1)), "b": np.zeros((10, 1))}, GateSettings(family="none"))
    assert looks["a"][0].family == "none: each of 2 skills at 0.05, unadjusted"
