"""``aces-bench grade``: score the trials of any Harbor job dir.

    aces-bench grade JOBS [--cases evals.json|SKILL_DIR] [--out DIR] [--mode MODE]
                          [--judge-model M [--judge-base-url U] [--judge-api-key-env NAME]]
                          [--workdir /app] [--skills-dir DIR] [--allowed-skills a,b]
                          [--condition with_skill|baseline] [--pass-threshold X]
                          [--weight metric=w ...] [--author-timeout SEC]

Writes ``grades.jsonl``, ``trials.parquet``/``trials.csv`` and ``summary.md`` to
``--out`` (default ``outputs/grades/<JOBS name>``) and prints the summary. How trials
are found and matched to cases is in ``aces_bench/grading/external.py``.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from pydantic import ValidationError

from aces_bench.config.spec import GradingSpec
from aces_bench.core.conditions import ALL_CONDITIONS
from aces_bench.core.errors import ConfigError, RunError, from_validation
from aces_bench.core.io import write_json, write_text
from aces_bench.graders.author import AUTHOR_TIMEOUT_SEC
from aces_bench.graders.modes import MODES, check_author_graders
from aces_bench.graders.redact import redact_value
from aces_bench.grading.external import find_trials, load_cases, subjects_for
from aces_bench.grading.grade import GradingContext, grade_subjects
from aces_bench.grading.summary import summary_markdown
from aces_bench.judges.factory import build_judge
from aces_bench.judges.options import judge_from_options
from aces_bench.judges.spec import JudgeSpec
from aces_bench.records.study import record_graded
from aces_bench.records.trials import TABLE_PARQUET, write_graded

GRADING_DEFAULTS = GradingSpec.model_fields  # the one declaration of grading.mode and grading.pass_threshold


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aces-bench grade", description="Grade the trials of any Harbor job dir.")
    p.add_argument("jobs", type=Path, help="a Harbor job dir, a trial dir, or a folder of job dirs")
    p.add_argument("--cases", type=Path, help="an evals file (json/jsonl/yaml) or a skill folder with evals/")
    p.add_argument("--out", type=Path, help="output folder (default outputs/grades/<jobs name>)")
    p.add_argument("--mode", choices=MODES, default=GRADING_DEFAULTS["mode"].default,
                   help=f"grading mode (default {GRADING_DEFAULTS['mode'].default}, as grading.mode)")
    p.add_argument("--judge-model", help="litellm model string; default: the offline heuristic judge")
    p.add_argument("--judge-base-url", help="OpenAI-compatible endpoint for the judge (vLLM, Ollama, llama.cpp)")
    p.add_argument("--judge-api-key-env", help="name of the env var holding the judge key (never the key)")
    p.add_argument("--workdir", help="the agent's working directory inside the trials (e.g. /app, /root)")
    p.add_argument("--skills-dir", help="where skills were staged inside the trials (default /skills)")
    p.add_argument("--allowed-skills", help="comma-separated skills the agent may read (routing)")
    p.add_argument("--condition", choices=ALL_CONDITIONS, help="force every trial's condition")
    p.add_argument("--pass-threshold", type=float, default=GRADING_DEFAULTS["pass_threshold"].default,
                   help=f"reward needed to pass (default {GRADING_DEFAULTS['pass_threshold'].default:g}, as "
                        "grading.pass_threshold)")
    p.add_argument("--weight", action="append", default=[], metavar="METRIC=W", help="composite weight (repeat)")
    p.add_argument("--author-timeout", type=float, default=AUTHOR_TIMEOUT_SEC, help="seconds per author grader")
    return p


def _grading_spec(args: argparse.Namespace) -> GradingSpec:
    weights: dict[str, float] = {}
    for item in args.weight:
        name, sep, value = item.partition("=")
        try:
            weights[name.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"--weight {item!r} is not METRIC=NUMBER", where="--weight",
                              fix="e.g. --weight security=2 --weight accuracy=1") from None
        if not sep:
            raise ConfigError(f"--weight {item!r} is not METRIC=NUMBER", where="--weight", fix="e.g. --weight security=2")
    try:
        return GradingSpec(mode=args.mode, pass_threshold=args.pass_threshold, weights=weights)
    except ValidationError as err:
        raise from_validation(err, where="aces-bench grade", prefix="grading",
                              fix="check --mode, --pass-threshold (0..1) and --weight names") from None


def _judge_spec(args: argparse.Namespace, out: Path) -> JudgeSpec:
    spec = judge_from_options(args.judge_model, args.judge_base_url, args.judge_api_key_env,
                              cache_dir=str(out / "judge-cache"))
    return spec or JudgeSpec()


def run(args: argparse.Namespace) -> Path:
    """Grade, write the outputs, return the output folder."""
    root = args.jobs
    out = args.out or Path("outputs") / "grades" / root.resolve().name
    grading = _grading_spec(args)
    judge = build_judge(_judge_spec(args, out))
    cases = load_cases(args.cases) if args.cases else None
    if grading.mode != "aces_default":
        if cases is None or cases.skill_dir is None:
            raise ConfigError(f"--mode {grading.mode} runs the skill's author graders, so it needs the skill folder",
                              where="--cases", fix="pass --cases <skill-dir> (holding SKILL.md and evals/graders/)")
        check_author_graders(grading.mode, {cases.suite.skill_name: cases.skill_dir})
    found, broken = find_trials(root)
    if not found:
        detail = f"; unreadable: {broken[0][0]}: {broken[0][1]}" if broken else ""
        raise RunError(f"no Harbor trial (a folder with a TrialResult result.json) found{detail}", where=root,
                       fix="point at a job dir (<jobs>/<job>), one of its trials, or a folder of job dirs")
    allowed = tuple(s.strip() for s in args.allowed_skills.split(",") if s.strip()) if args.allowed_skills else None
    subjects = subjects_for(found, root, cases=cases, workdir=args.workdir, skills_dir=args.skills_dir,
                            allowed_skills=allowed, condition=args.condition, judge_label=judge.label)
    ctx = GradingContext(grading=grading, judge=judge, author_timeout_sec=args.author_timeout)
    graded = asyncio.run(grade_subjects(subjects, ctx))
    write_graded(out, graded, mask=redact_value)
    record_graded(out)
    matched = sum(1 for s in subjects if s.case is not None)
    facts = [
        f"source: `{root}` ({len(found)} trials" + (f"; {len(broken)} trial dirs could not be read: counted "
                                                       "in unreadable.json, no metrics" if broken else "")
        + ")",
        f"mode: {grading.mode}; judge: {judge.label}; pass threshold: {grading.pass_threshold:g}",
        "composite: " + ("the author graders' score" if grading.mode == "custom_only"
                         else "weighted mean of the metrics scored on each trial (weights renormalised)"),
        f"cases: {cases.source} ({matched} of {len(subjects)} trials matched)" if cases
        else "cases: none given, so only case-independent checks ran (security, tool efficiency)",
    ] + [f"unreadable: `{p}`: {why}" for p, why in broken[:5]] + (
        [f"... and {len(broken) - 5} more in unreadable.json"] if len(broken) > 5 else [])
    write_json(out / "unreadable.json", [{"trial_dir": str(p), "cause": why} for p, why in broken])
    text = summary_markdown(graded, title=f"aces-bench grade: {root.resolve().name}", facts=facts)
    write_text(out / "summary.md", text)
    print(text)
    print(f"wrote {out / 'grades.jsonl'}, {out / TABLE_PARQUET}, {out / 'summary.md'}")
    return out


def main(argv: list[str]) -> int:
    run(parser().parse_args(argv))
    return 0
