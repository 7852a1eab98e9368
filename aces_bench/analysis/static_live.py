"""Static vs live: does a document scan of the study's target skills predict their lift?

The target skills are read from each member's ``provenance.json`` (``skills[]`` with
role ``target``). Each folder still on disk is scanned with ``aces_bench.static``:
Tier 1 (deterministic structural score) always; Tier 2 (rubric) only when the study's
judge was an LLM, through that judge. The offline heuristic judge never rates a
rubric, so Tier 2 then says it did not run; its scores are never faked.

A folder that is gone, or whose content no longer hashes to what the study ran, is
skipped with the reason: scanning a different version would correlate the wrong
document with the lift. Nothing here reruns a trial.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from aces_bench.core.errors import AcesError
from aces_bench.judges.spec import JudgeSpec
from aces_bench.records.stats import Correlation
from aces_bench.records.summary import ScannedSkill, StaticLiveSection
from aces_bench.records.trials import positive_cases
from aces_bench.reports.records import StudyData
from aces_bench.stats import build_pairs
from aces_bench.stats.correlation import static_lift_correlation

TARGET_ROLE = "target"
SMALL_N = 4


@dataclass
class TargetSkill:
    name: str
    path: Path
    content_hash: str | None
    members: list[str] = field(default_factory=list)


@dataclass
class StaticScores:
    """Per-skill static scores for ``study_stats`` plus what the report shows about them."""

    structural: dict[str, float]
    rubric: dict[str, float]
    skills: list[ScannedSkill]
    judges: list[JudgeSpec]
    reason: str | None
    profile: str = "aces"


def target_skills(study: StudyData) -> tuple[list[TargetSkill], list[str]]:
    """Target skills named in the members' provenance (one entry per name) and notes on conflicts."""
    found: dict[str, TargetSkill] = {}
    notes = []
    for m in study.members:
        if m.provenance is None:
            notes.append(f"{m.path.name}: no provenance.json, its target skills are unknown")
            continue
        for s in m.provenance.skills:
            if s.role != TARGET_ROLE:
                continue
            t = found.get(s.name)
            if t is None:
                found[s.name] = TargetSkill(s.name, Path(s.path), s.content_hash, [m.path.name])
                continue
            t.members.append(m.path.name)
            if s.content_hash != t.content_hash:
                # Two versions of one skill were run: their lift is pooled, so no single document matches it.
                notes.append(f"{s.name}: members ran different versions (content hashes differ)")
                t.content_hash = None
    return sorted(found.values(), key=lambda t: t.name), notes


def _current_hash(path: Path) -> str | None:
    from aces_bench.inputs.skills import hash_tree

    try:
        return hash_tree(path)
    except (AcesError, OSError):
        return None


def _llm_judges(study: StudyData) -> list[JudgeSpec]:
    # A panel (judge.models) scores the rubric with each of its members.
    specs = {s for m in study.members if m.provenance is not None
             for s in (m.provenance.spec.judge.members() or [m.provenance.spec.judge])}
    return sorted((j for j in specs if j.kind != "heuristic"), key=lambda j: (j.model or "", j.base_url or ""))


def scan_targets(study: StudyData) -> StaticScores:
    """Scan the study's target skills that are still on disk, unchanged, with Tier 1 (and Tier 2 with an LLM judge)."""
    targets, notes = target_skills(study)
    live = set(study.trials["skill"].astype(str))
    skills: list[ScannedSkill] = []
    to_scan: dict[str, TargetSkill] = {}
    for t in targets:
        if t.name not in live:
            continue
        skip = None
        if not (t.path / "SKILL.md").is_file():
            skip = f"skill folder is gone ({t.path} has no SKILL.md)"
        elif t.content_hash is None:
            skip = "members ran different versions of this skill; no single document matches its pooled lift"
        elif _current_hash(t.path) != t.content_hash:
            skip = "the folder changed since the study (content hash differs from provenance.json)"
        if skip:
            skills.append(ScannedSkill(skill=t.name, path=str(t.path), status="skipped", reason=skip))
        else:
            to_scan[os.path.realpath(t.path)] = t
    judges = _llm_judges(study)
    structural: dict[str, float] = {}
    rubric: dict[str, float] = {}
    profile = study_profile(study)
    if to_scan:
        from aces_bench.static import ScanOptions, run_scan

        _, results = run_scan(sorted(to_scan), ScanOptions(lint=False, judges=tuple(judges), profile=profile,
                                                            tier2_partial=True))  # a dead judge leaves Tier 2 unrated, not the report unbuilt
        for r in results:
            t = to_scan.get(os.path.realpath(r.path))
            if t is None:
                continue
            rated = [x.score for x in r.rubric if x.status == "ok" and x.score is not None]
            item = ScannedSkill(skill=t.name, path=str(t.path), status="scanned" if r.status == "ok" else "error",
                                reason=r.error, structural=r.score, grade=r.grade,
                                rubric=sum(rated) / len(rated) if rated else None)
            skills.append(item)
            if item.structural is not None:
                structural[t.name] = item.structural
            if item.rubric is not None:
                rubric[t.name] = item.rubric
    missing = sorted(live - {t.name for t in targets})
    if missing:
        notes.append(f"not named as a target in any provenance.json: {', '.join(missing)}")
    skills.sort(key=lambda s: s.skill)
    return StaticScores(structural, rubric, skills, judges, "; ".join(notes) or None, profile)


def study_profile(study: StudyData) -> str:
    """The study's Tier 1 rule profile (``study.static_profile``); ``aces`` when members disagree."""
    profiles = {m.provenance.spec.study.static_profile for m in study.members if m.provenance is not None}
    return profiles.pop() if len(profiles) == 1 else "aces"


def _caveat(corr: Correlation | None) -> str | None:
    if corr is None:
        return None
    if corr.rho is None:
        return f"rank correlation undefined ({corr.note or 'no data'}); n = {corr.n} skill(s)"
    if corr.n < SMALL_N:
        return (f"only {corr.n} skills with both a structural score and a lift: the Fisher-z interval needs 4 or "
                "more, so no CI is given and rho alone says almost nothing")
    if corr.n < 10:
        return f"n = {corr.n} skills: the interval is wide; read it as uninformative unless it excludes 0"
    return None


def section(scores: StaticScores | None, tier1: Correlation | None, study: StudyData, outcome: str,
            level: float, skip_reason: str | None = None) -> StaticLiveSection:
    """The summary's static-vs-live section (Tier 2 correlated here; Tier 1 comes from ``study_stats``)."""
    if scores is None or not scores.structural:
        reason = skip_reason or (scores.reason if scores and scores.reason else None)
        if scores is not None and scores.skills and not scores.structural:
            reason = "; ".join(filter(None, ["no target skill could be scanned", reason]))
        return StaticLiveSection(status="skipped", reason=reason or "no target skill folder to scan", outcome=outcome,
                                 skills=scores.skills if scores else [], tier2_status="not run: Tier 1 did not run",
                                 profile=scores.profile if scores else None)
    tier2, tier2_status = None, "not run: the study's judge is the offline heuristic judge, which does not rate rubrics"
    if scores.judges:
        labels = ", ".join(j.model or "?" for j in scores.judges)
        if scores.rubric:
            # Same pairs as Tier 1 and the verdict table: positive cases (negative controls apart).
            tier2, _ = static_lift_correlation(scores.rubric, positive_cases(build_pairs(study.trials)), outcome=outcome,
                                               level=level)
            tier2_status = f"ran (judge {labels})"
        else:
            tier2_status = f"ran but no skill was rated (judge {labels}); see the scan errors"
    return StaticLiveSection(status="ran", reason=scores.reason, outcome=outcome, skills=scores.skills, tier1=tier1,
                             tier2=tier2, tier2_status=tier2_status, caveat=_caveat(tier1), profile=scores.profile)


def structural_frame(scores: StaticScores) -> pd.DataFrame:
    return pd.DataFrame({"skill": list(scores.structural), "score": list(scores.structural.values())})
