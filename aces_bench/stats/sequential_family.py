"""Holm across a sequential study's skills: the level each skill is read at, look by look.

The fixed design adjusts "helps" and "harms" across a study's skills with Holm
(``gate.gate_family``). A sequential study decides its skills at different times, so the
step-down is made over time (Maurer & Bretz 2013, group-sequential Holm; with e-values,
Vovk & Wang 2021): of the k skills of the family (those with a positive case), while m
are not yet decided "helps", every undecided skill's gate is read at alpha / m (its
e-value must reach m / alpha). When a skill is decided "helps", m drops and the others are
asked again at the raised level, in the same round, until no further skill is decided (the
step-down). "harms" is a second family with its own count. A skill stopped for futility
keeps its share (its non-binding stop rejects nothing; counting it only makes the others'
levels smaller).

Why the family-wise error stays at most alpha: take the first time a true null skill is
decided "helps". Then no true null had been rejected, so m >= k0 (the true nulls) and its
e-value reached at least k0 / alpha at some look. Each true null's e-value is a
nonnegative supermartingale over its case rounds (``sequential``), so by Ville's inequality
it ever reaches k0 / alpha with probability at most alpha / k0; the first false "helps"
has probability at most k0 (alpha / k0) = alpha, under any dependence between skills.
``family`` "none" reads every skill at alpha (labelled "unadjusted").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateCases
from aces_bench.records.sequential import LookRecord, SequentialDesign
from aces_bench.stats.sequential import analyse


@dataclass
class Asked:
    """One skill asked at this round: its design, the look's index, the gate's data so far and its earlier looks."""

    design: SequentialDesign
    index: int
    cases: GateCases
    history: list[LookRecord]


def family_words(settings: GateSettings, k: int) -> str:
    """The family in words, as the fixed design's verdicts name it (``gate.gate_family``)."""
    if k <= 1:
        return "1 skill"
    if settings.family == "none":
        return f"none: each of {k} skills at {settings.alpha:g}, unadjusted"
    return f"Holm over {k} skills"


def holm_level(settings: GateSettings, k: int, decided: int) -> float:
    """The level of an undecided skill when ``decided`` of the family's ``k`` skills were
    already decided (helps, or harms for the harm family): alpha / (k - decided)."""
    if settings.family == "none" or k <= 1:
        return settings.alpha
    return settings.alpha / max(1, k - decided)


def analyse_family(asked: Mapping[str, Asked], settings: GateSettings, *, k: int, helped: int,
                   harmed: int) -> dict[str, LookRecord]:
    """Every asked skill's look at this round, at its Holm levels (module docstring).

    ``k``: skills in the family; ``helped`` / ``harmed``: how many of them earlier rounds
    decided "helps" / "harms". A skill decided here lowers the others' m, and the skills
    not yet decided are asked again at the raised levels until none more is decided."""
    words = family_words(settings, k)
    out: dict[str, LookRecord] = {}
    pending = sorted(asked)
    while pending:
        new_help = sum(r.decision == "helps" for r in out.values())
        new_harm = sum(r.decision == "harms" for r in out.values())
        level = holm_level(settings, k, helped + new_help)
        harm_level = holm_level(settings, k, harmed + new_harm)
        for name in pending:
            a = asked[name]
            out[name] = analyse(a.design, a.index, a.cases, a.history, level=level, harm_level=harm_level,
                                family=words)
        pending = [n for n in pending if out[n].decision not in ("helps", "harms")]
        if sum(r.decision in ("helps", "harms") for r in out.values()) == new_help + new_harm:
            break  # nobody newly decided: the levels cannot rise further this round
    return out
