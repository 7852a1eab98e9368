"""``aces-bench dataset ...``: create, refine and check a skill's evaluation cases.

    aces-bench dataset create <skill-dir> [--all-buckets] [--dry-run]
                                          [--judge-model M [--judge-base-url U] [--judge-api-key-env E] | --judge-config F]
    aces-bench dataset refine <skill-dir> --from-results <dir> [--apply] [--pass-threshold X] [--min-agree N]
        [--confirm CASE_ID ...]
    aces-bench dataset check <skill-dir> [<skill-dir> ...]
    aces-bench dataset show <skill-dir> [<skill-dir> ...]

User errors raise AcesError; the top-level CLI prints them without a traceback.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import yaml
from pydantic import ValidationError

from aces_bench.cases.formats import load_suite
from aces_bench.config.spec import GradingSpec
from aces_bench.core.errors import ConfigError, EvalsError, from_validation
from aces_bench.core.io import load_yaml, yaml_problem
from aces_bench.inputs.skills import discover_skill_dirs, load_skill
from aces_bench.judges.options import judge_from_options
from aces_bench.judges.spec import JudgeSpec


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aces-bench dataset", description="Create, refine and check a skill's evaluation cases.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("create", help="write evals/evals.json: author cases kept, EVAL.md first, missing buckets generated")
    c.add_argument("skill_dir", type=Path)
    c.add_argument("--all-buckets", action="store_true", help="generate every bucket, even those author cases cover")
    c.add_argument("--dry-run", action="store_true", help="report what would change; write nothing")
    add_judge_arguments(c, what="writes cases instead of offline templates")
    c.add_argument("--refine", action="store_true", help=argparse.SUPPRESS)  # moved: 'dataset refine'
    c.add_argument("--from-results", type=Path, help=argparse.SUPPRESS)
    r = sub.add_parser("refine", help="propose expected_behavior/expected_output from real trials, as a diff")
    r.add_argument("skill_dir", type=Path)
    r.add_argument("--from-results", type=Path, required=True, help="study output dir (grades.jsonl, trials.parquet)")
    r.add_argument("--apply", action="store_true", help="write the proposed changes (default: print the diff only)")
    r.add_argument("--pass-threshold", type=float, default=GradingSpec.model_fields["pass_threshold"].default,
                   help="reward at or above which a trial passes (default: grading.pass_threshold's)")
    r.add_argument("--min-agree", type=int, default=2, help="passing trials that must give the same answer")
    r.add_argument("--confirm", action="append", default=[], metavar="CASE_ID",
                   help="accept a proposed expected_output that contradicts the case's current one (repeatable)")
    k = sub.add_parser("check", help="validate the evaluation assets of skills and summarise their cases")
    k.add_argument("paths", type=Path, nargs="+")
    s = sub.add_parser("show", help="how every case was read: its file, format, renamed, resolved and ignored fields")
    s.add_argument("paths", type=Path, nargs="+")
    for sp in (k, s):
        sp.add_argument("--evals-file", help="read only this evals file of each skill (as skill.evals_file=)")
    return p


def add_judge_arguments(p: argparse.ArgumentParser, *, what: str) -> None:
    """The model options every dataset command shares."""
    p.add_argument("--judge-model", help=f"LLM (litellm model string) that {what}")
    p.add_argument("--judge-base-url", help="OpenAI-compatible endpoint for --judge-model")
    p.add_argument("--judge-api-key-env", help="NAME of the env var holding the judge's key (never the key)")
    p.add_argument("--judge-config", type=Path, help="a YAML JudgeSpec (conf/judge/*.yaml shape)")


def judge_from_args(args: argparse.Namespace):
    """The judge the options name, or None (offline)."""
    spec = _judge_spec(args)
    if spec is None:
        return None
    from aces_bench.judges.factory import build_judge

    return build_judge(spec)


def _judge_spec(args: argparse.Namespace) -> JudgeSpec | None:
    if args.judge_config is not None:
        if args.judge_model:
            raise ConfigError("give --judge-config or --judge-model, not both", where="--judge-config", fix="drop one")
        try:
            raw = load_yaml(args.judge_config.read_text(encoding="utf-8"))
            return JudgeSpec.model_validate(raw)
        except OSError as exc:
            raise ConfigError(f"cannot read: {exc.strerror}", where=args.judge_config, fix="check the path") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"not valid YAML: {yaml_problem(exc)}", where=args.judge_config, fix="fix the YAML syntax") from None
        except ValidationError as err:
            raise from_validation(err, where=args.judge_config, prefix="judge", fix="correct the listed keys") from None
    return judge_from_options(args.judge_model, args.judge_base_url, args.judge_api_key_env)
    return None


def _refine(args: argparse.Namespace) -> int:
    from aces_bench.datasets.refine import refine_dataset

    report = refine_dataset(args.skill_dir, args.from_results, pass_threshold=args.pass_threshold,
                            min_agree=args.min_agree, dry_run=not args.apply, confirm=args.confirm)
    print(report.render())
    return 0


def _create(args: argparse.Namespace) -> int:
    if args.refine or args.from_results is not None:
        raise EvalsError("refinement is its own command", where="--refine",
                         fix=f"run 'aces-bench dataset refine {args.skill_dir} --from-results <dir>'")
    judge = judge_from_args(args)
    from aces_bench.datasets.create import create_dataset

    report = create_dataset(args.skill_dir, judge=judge, all_buckets=args.all_buckets, dry_run=args.dry_run)
    print(report.render())
    return 0


def _check(args: argparse.Namespace) -> int:
    for path in args.paths:
        for skill_dir in discover_skill_dirs(path):
            skill = load_skill(skill_dir)
            suite = load_suite(skill_dir, skill.name, args.evals_file)
            kinds = Counter("negative" if c.is_negative_control else (c.kind or "unkinded") for c in suite.evals)
            sources = Counter(c.source for c in suite.evals)
            print(f"{skill.name}: {len(suite.evals)} case(s); "
                  f"buckets {dict(sorted(kinds.items()))}; sources {dict(sorted(sources.items()))}")
    return 0


def _show(args: argparse.Namespace) -> int:
    from aces_bench.cases.formats import load_assets

    for path in args.paths:
        for skill_dir in discover_skill_dirs(path):
            skill = load_skill(skill_dir)
            assets = load_assets(skill_dir, skill.name, args.evals_file)
            print(f"{skill.name}: {len(assets.readings)} case(s) ({assets.rule} file rule)")
            for reading in assets.readings:
                print("  " + reading.render().replace("\n", "\n  "))
            for path, why in assets.unread:
                print(f"  {path.relative_to(skill_dir).as_posix()}: {why}")
    return 0


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    return {"create": _create, "refine": _refine, "check": _check, "show": _show}[args.command](args)
