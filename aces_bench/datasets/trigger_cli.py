"""``aces-bench trigger``: trigger evaluation and description optimisation of a skill.

    aces-bench trigger <skill-dir> [--queries FILE] [--decoys DIR ...] [--runs N] [--json OUT]
                                   [--optimise [--seed S] [--test-share X]]
                                   [--judge-model M [--judge-base-url U] [--judge-api-key-env E] | --judge-config F]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from aces_bench.datasets.cli import add_judge_arguments, judge_from_args
from aces_bench.datasets.trigger import evaluate_triggers
from aces_bench.io import write_text


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aces-bench trigger",
                                description="Does the skill activate for the queries it should, and only those?")
    p.add_argument("skill_dir", type=Path)
    p.add_argument("--queries", type=Path, help="a JSON list of {query, should_trigger} (default: the skill's "
                   "evals/trigger-evals.json and EVAL.md's trigger sections)")
    p.add_argument("--decoys", type=Path, nargs="*", default=None,
                   help="skill folders staged beside the target for the group workspace (default: the bundled decoys)")
    p.add_argument("--runs", type=int, default=3, help="runs per query (a model router; the offline router decides once)")
    p.add_argument("--optimise", "--optimize", action="store_true", help="propose and choose a better description")
    p.add_argument("--seed", type=int, default=0, help="seed of the stratified train/test split")
    p.add_argument("--test-share", type=float, default=0.4, help="share of each kind of query held out for the choice")
    p.add_argument("--json", type=Path, help="also write the report as JSON here")
    add_judge_arguments(p, what="routes (and proposes descriptions) instead of the offline reference router")
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.decoys is None:
        import aces_bench.examples

        decoys = [Path(aces_bench.examples.__file__).parent / "decoys"]
    else:
        decoys = list(args.decoys)
    report = evaluate_triggers(args.skill_dir, queries_file=args.queries, decoys=decoys, runs=args.runs,
                               judge=judge_from_args(args), optimise_description=args.optimise,
                               seed=args.seed, test_share=args.test_share)
    print(report.render())
    if args.json is not None:
        write_text(args.json, json.dumps(report.to_json(), indent=2, sort_keys=True) + "\n")
    return 0
