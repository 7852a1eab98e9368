"""A whole scan: discover, Tier 1 + security, lint, Tier 2, corpus figures, outputs."""

from __future__ import annotations

import hashlib
import platform
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aces_bench import __version__
from aces_bench.core.io import staging_dir, swap_in, write_json, write_text
from aces_bench.core.text import printable
from aces_bench.static.catalog import DEFAULT_PROFILE, catalog, rules_file
from aces_bench.static.corpus import compare, load_reported, summarize
from aces_bench.static.models import CorpusResult, SkillResult
from aces_bench.static.scanner import discover, scan_refs
from aces_bench.static.security import PATTERNS_FILE

if TYPE_CHECKING:  # imported where used: a plain scan starts without them
    from aces_bench.judges.spec import JudgeSpec

FORMATS = ("json", "sarif", "md")


@dataclass(frozen=True)
class ScanOptions:
    gate: float = 70.0
    strict: bool = False
    lint: bool = True
    judges: Sequence[JudgeSpec] = field(default_factory=tuple)
    judge_concurrency: int = 4
    reported: Path | None = None
    live_results: Path | None = None
    profile: str = DEFAULT_PROFILE  # rule profile: "aces" or "skillevaluator"
    skillevaluator_results: Path | None = None  # SkillEvaluator's own JSON, to compare
    tier2_partial: bool = False  # keep going when a judge fails its probe


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_scan(
    paths: Sequence[str | Path],
    opts: ScanOptions,
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[CorpusResult, list[SkillResult]]:
    """Scan every skill under ``paths``; user errors raise AcesError subclasses."""
    reported = (
        load_reported(opts.reported) if opts.reported else None
    )  # fail fast on a bad path
    lift = None
    if opts.live_results:
        from aces_bench.static.live import load_lift

        lift = load_lift(opts.live_results)
    se_ref = None
    if opts.skillevaluator_results:
        from aces_bench.static.reference import load_skillevaluator

        se_ref = load_skillevaluator(opts.skillevaluator_results)
    cat = catalog(opts.profile)
    refs = discover(paths)
    judge_specs, probe_failed = list(opts.judges), {}
    if judge_specs:
        from aces_bench.static.rubric import probe_judges

        # One request per judge before any skill: a dead endpoint or a bad key stops
        # the scan here (JudgeUnavailable) instead of retrying on every skill.
        judge_specs, probe_failed = probe_judges(judge_specs, partial=opts.tier2_partial)
    pairs = scan_refs(
        refs, gate_at=opts.gate, strict=opts.strict, progress=progress, cat=cat
    )
    results = [r for r, _ in pairs]
    docs = [d for _, d in pairs]
    if opts.lint:
        from aces_bench.static.lint import lint_docs

        per_doc, runs = lint_docs([d for d in docs if d.text is not None])
        ok_idx = [i for i, d in enumerate(docs) if d.text is not None]
        for i, lint in zip(ok_idx, per_doc, strict=True):
            results[i].lint = lint
            results[i].tools = runs
    rubric_summary = None
    rubric_means = None
    if judge_specs:
        import asyncio

        from aces_bench.static.rubric import build_judges, rate_corpus, summarize_rubric

        judges = build_judges(judge_specs)
        scored = [i for i, r in enumerate(results) if r.status == "ok"]
        ratings = asyncio.run(
            rate_corpus(
                [docs[i] for i in scored], judges, concurrency=opts.judge_concurrency
            )
        )
        for i, rs in zip(scored, ratings, strict=True):
            results[i].rubric = rs
        rubric_summary = summarize_rubric(
            {
                results[i].skill_id: results[i].score
                for i in scored
                if results[i].score is not None
            },
            {results[i].skill_id: results[i].rubric for i in scored},
            gate=opts.gate,
        )
        rubric_means = rubric_summary.get("rubric_means")
        if probe_failed:
            rubric_summary["probe_failed"] = probe_failed
    elif probe_failed:
        rubric_summary = {
            "status": "not_run",
            "detail": "no judge answered the probe request: "
            + "; ".join(f"{k}: {v[:200]}" for k, v in probe_failed.items()),
            "probe_failed": probe_failed,
        }
    else:
        rubric_summary = {
            "status": "not_run",
            "detail": "no judge configured; pass --judge-model (and --judge-base-url) to run Tier 2",
        }
    corpus = summarize(
        results,
        roots=[str(p) for p in paths],
        gate=opts.gate,
        strict=opts.strict,
        cat=cat,
    )
    corpus.rubric_summary = rubric_summary
    if reported is not None:
        corpus.comparison = compare(corpus, reported, cat=cat)
    if se_ref is not None:
        from aces_bench.static.reference import agreement

        corpus.skillevaluator_agreement = agreement(results, se_ref)
    if lift is not None:
        from aces_bench.static.live import static_vs_live

        corpus.static_vs_live = static_vs_live(results, lift, rubric_means)
    corpus.provenance = {
        "aces_bench": __version__,
        "python": platform.python_version(),
        "rule_profile": cat.profile,
        "rules_sha256": _sha(rules_file(cat.profile)),
        "patterns_sha256": _sha(PATTERNS_FILE),
        "rules_schema_version": cat.schema_version,
        "judges": [s.model_dump(mode="json") for s in opts.judges],
    }
    return corpus, results


def _skill_file(skill_id: str) -> str:
    return skill_id.replace("/", "__") + ".json"


def write_outputs(
    out: Path,
    corpus: CorpusResult,
    results: list[SkillResult],
    formats: Sequence[str] = FORMATS,
    figures: bool = True,
) -> list[Path]:
    """Write the requested formats (and figures with the Markdown summary) atomically."""
    out = Path(out)
    written: list[Path] = []
    fig_names: list[str] = []
    if figures and "md" in formats:
        fig_names = [
            p.relative_to(out).as_posix()
            for p in write_figures(out / "figures", corpus, results)
        ]
        written += [out / n for n in fig_names]
    if "json" in formats:
        written += _write_skill_files(out / "skills", results)
        written.append(write_json(out / "corpus.json", corpus))
    if "sarif" in formats:
        from aces_bench.static.sarif import to_sarif

        cat = catalog(corpus.profile)
        written.append(
            write_json(out / "scan.sarif", to_sarif(results, corpus.roots, cat=cat))
        )
    if "md" in formats:
        from aces_bench.static.report_md import render

        written.append(
            write_text(out / "summary.md", printable(render(corpus, results, fig_names)))
        )
    return written


def _write_skill_files(folder: Path, results: list[SkillResult]) -> list[Path]:
    """``skills/<id>.json`` for every result, swapped in as one folder.

    The files are written plainly into a staging folder that replaces ``folder`` whole
    (``io.swap_in``): a reader sees the previous scan's files or this one's, never a mix
    or a half-written file, and files of skills no longer scanned go. One atomic swap
    instead of one fsync'd temp file per skill (a fsync each took a fifth of a corpus
    scan's time).
    """
    staging = staging_dir(folder)
    try:
        for r in results:
            # pydantic's serializer writes what io.json_text would (UTF-8, indent 2; scores
            # are rounded, so no float takes an exponent), several times faster.
            text = r.model_dump_json(indent=2) + "\n"
            (staging / _skill_file(r.skill_id)).write_text(text, encoding="utf-8")
        swap_in(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [folder / _skill_file(r.skill_id) for r in results]


def write_figures(
    folder: Path, corpus: CorpusResult, results: list[SkillResult]
) -> list[Path]:
    """The corpus figures. A scan of one skill has no distribution to draw (its score and
    rule hits are in summary.md's tables), so it gets none, and starts without matplotlib."""
    scores = [r.score for r in results if r.score is not None]
    paths: list[Path] = []
    if len(results) < 2:
        return paths
    from aces_bench.static import figures

    if scores:
        reported_mean = None
        if corpus.comparison:
            reported_mean = next(
                (
                    row["reported"]
                    for row in corpus.comparison["score_rows"]
                    if row["figure"] == "mean"
                ),
                None,
            )
        paths.append(
            figures.score_histogram(
                scores,
                folder / "score_histogram.svg",
                reported_mean=reported_mean,
                gate=corpus.gate,
            )
        )
    if corpus.top_violations:
        paths.append(
            figures.top_violations(corpus.top_violations, folder / "top_violations.svg")
        )
    rs = corpus.rubric_summary or {}
    if rs.get("status") == "ran" and rs.get("rubric_means"):
        by_id = {r.skill_id: r.score for r in results if r.score is not None}
        common = sorted(set(by_id) & set(rs["rubric_means"]))
        if len(common) >= 2:
            paths.append(
                figures.structural_vs_rubric(
                    [by_id[s] for s in common],
                    [rs["rubric_means"][s] for s in common],
                    rs["structural_vs_rubric"],
                    folder / "structural_vs_rubric.svg",
                )
            )
    return paths
