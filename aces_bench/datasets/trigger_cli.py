"""``aces-bench trigger``: trigger evaluation and description optimisation of a skill.

    aces-bench trigger <skill-dir> [group=option | key=value ...] [--queries FILE] [--runs N]
                                   [--modes isolation group] [--out DIR] [--timeout-sec S] [--max-turns K]
                                   [--optimise [--seed S] [--test-share X]] [--json OUT] [--html OUT]
                                   [--judge-model M [--judge-base-url U] [--judge-api-key-env E] | --judge-config F]
    aces-bench trigger <skill-dir> --router [--decoys DIR ...] ...   (the router alone: nothing runs)

By default the configured harness runs through Harbor (the study's config groups:
``harness=terminus-2 model=... backend=... decoys=...``), one trial per query and run,
in isolation and in a group workspace with decoys (``decoys=paper`` unless given).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from aces_bench.core.errors import ConfigError
from aces_bench.core.io import write_text
from aces_bench.datasets.cli import add_judge_arguments, judge_from_args


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aces-bench trigger",
                                description="Does the skill activate for the queries it should, and only those?")
    p.add_argument("skill_dir", type=Path)
    p.add_argument("overrides", nargs="*", help="config overrides, as for a study (harness=..., model=..., decoys=...)")
    p.add_argument("--queries", type=Path, help="a JSON list of {query, should_trigger} (default: the skill's "
                   "evals/trigger-evals.json and EVAL.md's trigger sections)")
    p.add_argument("--runs", type=int, default=3, help="trials per query and mode (default 3)")
    p.add_argument("--modes", nargs="+", default=["isolation", "group"], help="workspace modes (default both)")
    p.add_argument("--out", type=Path, help="output folder (default outputs/trigger/<skill>): tasks, jobs, reports")
    p.add_argument("--timeout-sec", type=float, default=120.0,
                   help="agent timeout of a trigger trial unless workspace.agent_timeout_sec is given (default 120)")
    p.add_argument("--max-turns", type=int, default=3,
                   help="turn limit of a trigger trial for harnesses that have one (terminus-2, claude-code)")
    p.add_argument("--router", action="store_true",
                   help="decide with the reference agent's router (or --judge-model) only: no agent runs")
    p.add_argument("--decoys", type=Path, nargs="*", default=None,
                   help="skill folders staged beside the target in the group workspace (default: the paper's decoys)")
    p.add_argument("--optimise", "--optimize", action="store_true", help="propose and choose a better description")
    p.add_argument("--seed", type=int, default=0, help="seed of the stratified train/test split")
    p.add_argument("--test-share", type=float, default=0.4, help="share of each kind of query held out for the choice")
    p.add_argument("--json", type=Path, help="write the report as JSON here (harness runs: also <out>/trigger.json)")
    p.add_argument("--html", type=Path, help="write the report as an HTML fragment here (also <out>/trigger.html)")
    add_judge_arguments(p, what="proposes descriptions (with --router: also routes)")
    return p


def _write(report, json_path: Path | None, html_path: Path | None) -> None:
    from aces_bench.datasets.trigger_html import render_fragment

    if json_path is not None:
        write_text(json_path, json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n")
    if html_path is not None:
        write_text(html_path, render_fragment(report))


def main(argv: list[str]) -> int:
    args = _parser().parse_intermixed_args(argv)
    flags = [o for o in args.overrides if o.startswith("-") or "=" not in o]
    if flags:
        raise ConfigError(f"not a config override: {flags[0]!r}", where="aces-bench trigger",
                          fix="give overrides as group=option or group.key=value, options before or after them")
    judge = judge_from_args(args)
    if args.router:
        from aces_bench.datasets.trigger import evaluate_triggers

        if args.overrides:
            raise ConfigError("--router runs no harness, so config overrides do not apply", where="--router",
                              fix="drop the overrides, or drop --router to run the configured harness")
        if args.decoys is None:
            import aces_bench.examples

            decoys = [Path(aces_bench.examples.__file__).parent / "decoys"]
        else:
            decoys = list(args.decoys)
        report = evaluate_triggers(args.skill_dir, queries_file=args.queries, decoys=decoys, runs=args.runs,
                                   judge=judge, optimise_description=args.optimise,
                                   seed=args.seed, test_share=args.test_share)
        print(report.render())
        _write(report, args.json, args.html)
        return 0

    from aces_bench.datasets.trigger_run import evaluate_with_harness, quoted

    overrides = list(args.overrides)
    if args.decoys is not None:
        overrides.append("decoys.paths=[" + ",".join(quoted(p.resolve()) for p in args.decoys) + "]")
    out = args.out or Path("outputs") / "trigger" / Path(args.skill_dir).resolve().name
    report = evaluate_with_harness(args.skill_dir, overrides, out=out, queries_file=args.queries, runs=args.runs,
                                   modes=tuple(args.modes), timeout_sec=args.timeout_sec, max_turns=args.max_turns,
                                   judge=judge, optimise_description=args.optimise, seed=args.seed,
                                   test_share=args.test_share)
    print(report.render())
    _write(report, out / "trigger.json", out / "trigger.html")
    _write(report, args.json, args.html)
    return 0
