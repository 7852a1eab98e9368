"""``aces-bench scan``: static tiers over skill folders. Thin: parse, run, print."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from aces_bench.core.errors import AcesError, ConfigError
from aces_bench.static.catalog import PROFILES
from aces_bench.static.pipeline import FORMATS, ScanOptions, run_scan, write_outputs
from aces_bench.static.report_md import term_text

if TYPE_CHECKING:
    from aces_bench.judges.spec import JudgeSpec

PROGRESS_MIN_SKILLS = 20


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="aces-bench scan",
        description="Static tiers: structural score (Tier 1), rubric judge (Tier 2), content security scan and script lint.",
        epilog="Exit status: 0 every skill passed the gate, 1 some skill failed it or could not be scored, 2 bad input.",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a skill folder, a folder of skills (any depth) or a glob",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="write outputs here (corpus.json, skills/*.json, scan.sarif, summary.md, figures/)",
    )
    p.add_argument(
        "--format",
        default=",".join(FORMATS),
        help=f"comma-separated subset of {','.join(FORMATS)} (default: all)",
    )
    p.add_argument(
        "--gate",
        type=float,
        default=70.0,
        help="structural score a skill needs to pass (default 70)",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="enforce the frontmatter contract: name, description, version, author, tags, tools",
    )
    p.add_argument(
        "--profile",
        default="aces",
        choices=sorted(PROFILES),
        help="Tier 1 rule profile: 'aces' (this project's rules, default) or 'skillevaluator' "
        "(NVIDIA SkillEvaluator 0.2.0's Tier 1 quality score, rule by rule; the ACES paper's scan)",
    )
    p.add_argument(
        "--no-lint",
        action="store_true",
        help="skip ruff/shellcheck even when they are on PATH",
    )
    p.add_argument(
        "--no-figures",
        action="store_true",
        help="do not draw figures with the Markdown summary",
    )
    p.add_argument(
        "--judge-model",
        action="append",
        default=[],
        metavar="M",
        help="litellm model for Tier 2; repeat to rotate several judges",
    )
    p.add_argument(
        "--judge-base-url",
        action="append",
        default=[],
        metavar="URL",
        help="OpenAI-compatible endpoint; once for all judges or once per --judge-model",
    )
    p.add_argument(
        "--judge-api-key-env",
        metavar="VAR",
        help="name of the env var holding the judge API key",
    )
    p.add_argument(
        "--judge-cache-dir", metavar="DIR", help="persistent judge reply cache"
    )
    p.add_argument("--judge-concurrency", type=int, default=4, metavar="N")
    p.add_argument(
        "--tier2-partial",
        action="store_true",
        help="keep the scan going when a judge fails its probe or some skills cannot be rated "
        "(default: stop with an error before the corpus, exit 1 on rating errors)",
    )
    p.add_argument(
        "--reported",
        type=Path,
        metavar="JSON",
        help="reported figures to compare with (the ACES paper's reported.json)",
    )
    p.add_argument(
        "--live-results",
        type=Path,
        metavar="DIR",
        help="results folder with trials.parquet (or a JSON {skill: lift}) for static-vs-live correlation",
    )
    p.add_argument(
        "--skillevaluator-results",
        type=Path,
        metavar="JSON",
        help="SkillEvaluator's own Tier 1 JSON for the same folders: print the rank agreement "
        "and the shares >= 70 / >= 80 side by side",
    )
    p.add_argument("--quiet", action="store_true", help="no progress display")
    return p


def check_out_dir(out: Path) -> None:
    """Refuse an --out that cannot hold files, before any skill is scanned."""
    blocker = next((p for p in (out, *out.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise ConfigError(
            f"{blocker} is a file, so the output folder cannot be created",
            where=f"--out {out}",
            fix="give a folder path (it is created if missing)",
        )
    if blocker is not None and not os.access(blocker, os.W_OK):
        raise ConfigError(
            f"{blocker} is not writable", where=f"--out {out}", fix="choose a folder you can write to"
        )


def judge_specs(
    models: list[str], urls: list[str], key_env: str | None, cache_dir: str | None
) -> list[JudgeSpec]:
    """One litellm JudgeSpec per model; base URLs pair up by position or one is shared."""
    if urls and not models:
        raise ConfigError(
            "--judge-base-url given without --judge-model",
            where="--judge-base-url",
            fix="add --judge-model M (e.g. hosted_vllm/<id>)",
        )
    if urls and len(urls) not in (1, len(models)):
        raise ConfigError(
            f"{len(urls)} --judge-base-url for {len(models)} --judge-model",
            where="--judge-base-url",
            fix="give one URL for all judges or one per --judge-model, in the same order",
        )
    if not models:
        return []
    from aces_bench.judges.options import litellm_judge

    specs = []
    for i, m in enumerate(models):
        url = (urls[i] if len(urls) > 1 else urls[0]) if urls else None
        specs.append(litellm_judge(m, base_url=url, api_key_env=key_env, cache_dir=cache_dir, temperature=0.0,
                                   where=f"--judge-model {m}"))
    return specs


def _formats(raw: str) -> list[str]:
    fmts = [f.strip() for f in raw.split(",") if f.strip()]
    bad = [f for f in fmts if f not in FORMATS]
    if bad or not fmts:
        raise ConfigError(
            f"unknown format(s) {bad or raw!r}",
            where="--format",
            fix=f"use a comma-separated subset of: {', '.join(FORMATS)}",
        )
    return fmts


def _progress(n_total_hint: int, quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import Progress

    prog = Progress(
        transient=True, console=Console(stderr=True)
    )  # stdout stays clean for the summary
    task = prog.add_task("scanning", total=n_total_hint or None)

    def update(done: int, total: int, skill_id: str) -> None:
        if total >= PROGRESS_MIN_SKILLS:
            if not prog.live.is_started:
                prog.start()
            prog.update(
                task,
                completed=done,
                total=total,
                description=f"scanning {skill_id[:40]}",
            )

    return prog, update


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    prog = None
    try:
        formats = _formats(args.format)
        opts = ScanOptions(
            gate=args.gate,
            strict=args.strict,
            lint=not args.no_lint,
            judges=judge_specs(
                args.judge_model,
                args.judge_base_url,
                args.judge_api_key_env,
                args.judge_cache_dir,
            ),
            judge_concurrency=max(1, args.judge_concurrency),
            reported=args.reported,
            live_results=args.live_results,
            profile=args.profile,
            skillevaluator_results=args.skillevaluator_results,
            tier2_partial=args.tier2_partial,
        )
        if args.out:
            check_out_dir(Path(args.out))
        prog, update = _progress(0, args.quiet)
        try:
            corpus, results = run_scan(args.paths, opts, progress=update)
        finally:
            if prog is not None and prog.live.is_started:
                prog.stop()
        written = (
            write_outputs(
                args.out, corpus, results, formats, figures=not args.no_figures
            )
            if args.out
            else []
        )
    except AcesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _print_summary(corpus, results, written, args.out)
    failed = [r for r in results if not r.passed_gate]
    return 1 if failed or (tier2_incomplete(corpus) and not args.tier2_partial) else 0


def tier2_incomplete(corpus) -> bool:
    """A judge that failed its probe or left skills unrated."""
    rs = corpus.rubric_summary or {}
    if rs.get("probe_failed"):
        return True
    return rs.get("status") == "ran" and any(
        j.get("n_errors") for j in rs.get("judges", {}).values()
    )


def _print_summary(corpus, results, written, out) -> None:
    s = corpus.stats
    if len(results) <= 10:
        for r in results:
            if r.status != "ok":
                print(f"{term_text(r.skill_id)}: ERROR {term_text(r.error)}")
                continue
            crit = sum(1 for x in r.security if x.severity in ("critical", "high"))
            print(
                f"{term_text(r.skill_id)}: {r.score:.1f} ({r.grade}) {'PASS' if r.passed_gate else 'FAIL'}  findings={len(r.findings)} security(high+)={crit}"
            )
            for reason in r.gate_reasons:
                print(f"    {term_text(reason)}")
    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f}%"
    mean = "n/a" if s.mean is None else f"{s.mean:.1f}"
    print(
        f"{corpus.n_skills} skill(s), {corpus.n_errors} error(s); mean {mean}, >=70 {pct(s.share_at_or_above_70)}, >=80 {pct(s.share_at_or_above_80)}, passing gate {pct(s.share_passing_gate)}"
    )
    if corpus.skillevaluator_agreement:
        from aces_bench.static.reference import format_agreement

        for line in format_agreement(corpus.skillevaluator_agreement, corpus.profile):
            print(line)
    rs = corpus.rubric_summary or {}
    if rs.get("status") != "ran":
        print(f"Tier 2 rubric: not run ({rs.get('detail', 'no judge')})")
    else:
        for label, j in rs["judges"].items():
            mean = "n/a" if j["mean"] is None else f"{j['mean']:.1f}"
            print(f"Tier 2 rubric [{label}]: {j['n_rated']} rated, {j['n_errors']} unrated (errors), mean {mean}")
        for label, why in (rs.get("probe_failed") or {}).items():
            print(f"Tier 2 rubric [{label}]: not used, failed the probe: {why[:200]}")
        ag = rs.get("judge_agreement")
        if ag:
            icc = "n/a" if ag["icc"] is None else f"{ag['icc']:.3f} ({ag['band']})"
            kappas = ", ".join(
                f"{k} {'n/a' if v is None else f'{v:.2f}'}" for k, v in ag["weighted_kappa_quadratic"].items()
            )
            print(f"Tier 2 judge agreement: ICC(A,1) {icc} over {ag['n_items']} criterion scores; weighted kappa {kappas}")
            if ag["low"] or ag["icc"] is None:
                print(f"warning: {ag['detail']}")
    if out:
        print(f"wrote {len(written)} file(s) to {out}")
