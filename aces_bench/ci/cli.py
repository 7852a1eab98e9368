"""``aces-bench ci``: skill CI for a repository of skills (AEVAL-style).

1. Change detection: skills whose folder (SKILL.md, scripts, evals/ cases) changed
   since ``--since``, plus skills that depend on them (``--config``: support users,
   bundles; SKILL.md frontmatter ``requires``). Only those run.
2. One paired study over them (``skill=custom``, any study overrides after ``--``).
3. Comparison with the stored last good run (``--baseline``): per case, judged by a
   paired interval.
4. The promotion policy (``--policy`` YAML) -> pass/fail with reasons.
5. The evidence packet (``--out``/packet): verdict.json, summary.md, junit.xml,
   runtime.sarif, provenance.json, suggestions.json (LV1/LV2), the report, and the
   failing cases' trajectories. ``--save-baseline`` stores a passing run as last good.

Exit 0 when the policy passes, 1 when it fails, 2 on a usage error.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from aces_bench.core.errors import ConfigError
from aces_bench.core.io import load_yaml, write_text, yaml_problem

WORK_DIR = ".aces"
"""Everything ci writes in the repository, by default: the packet, the last good run and
the task cache, under one folder holding a ``.gitignore`` of ``*`` (git status stays clean)."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aces-bench ci", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="example: aces-bench ci --since origin/main --skills skills "
                                       "--policy aces-policy.yaml --baseline .aces/last-good --save-baseline")
    p.add_argument("--since", metavar="REF", help="git ref to diff against (default: run every skill)")
    p.add_argument("--repo", type=Path, default=Path("."), help="the repository (default: .)")
    p.add_argument("--skills", type=Path, action="append", metavar="DIR",
                   help="skill folder or folder of skills, relative to the repo (repeatable; default: the repo)")
    p.add_argument("--config", type=Path, metavar="YAML",
                   help="dependencies: 'support: {helper-skill: [user, ...]}', 'bundles: {name: [skill, ...]}'")
    p.add_argument("--policy", type=Path, metavar="YAML",
                   help="promotion policy (default: the gate at its defaults, docs/gate.md, and no regression)")
    p.add_argument("--baseline", type=Path, metavar="DIR", default=Path(WORK_DIR) / "last-good",
                   help=f"stored last good run (default: {WORK_DIR}/last-good in the repo)")
    p.add_argument("--save-baseline", action="store_true", help="store this run as the last good one if it passes")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help=f"output folder (default: {WORK_DIR}/ci in the repo, a folder git ignores)")
    lv2 = p.add_argument_group("LV2 suggestions by a model (default: offline rules)")
    lv2.add_argument("--suggest-model", metavar="MODEL", help="litellm model that writes LV2 edits, e.g. openai/gpt-4o-mini")
    lv2.add_argument("--suggest-base-url", metavar="URL", help="OpenAI-compatible endpoint for --suggest-model")
    lv2.add_argument("--suggest-api-key-env", metavar="VAR", help="name of the variable holding its key")
    p.add_argument("overrides", nargs="*", help="study overrides, e.g. harness=terminus-2 model=gpt-4o")
    return p


def _config(path: Path | None) -> tuple[dict, dict]:
    if path is None:
        return {}, {}
    try:
        raw = load_yaml(path.read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read the ci config: {exc.strerror}", where=path, fix="check the path") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"the ci config is not valid YAML: {yaml_problem(exc)}", where=path, fix="pass a YAML mapping") from None
    unknown = set(raw) - {"support", "bundles"}
    if unknown:
        raise ConfigError(f"unknown ci config key(s): {', '.join(sorted(unknown))}", where=path,
                          fix="valid keys: support, bundles")
    return dict(raw.get("support") or {}), dict(raw.get("bundles") or {})


def ignored_work_dir(repo: Path) -> Path:
    """``<repo>/.aces``, ignored by git whatever the repo's own ignores say; ci's task cache goes there too
    (``ACES_EMIT_CACHE``, unless set), not into ``.aces-cache`` of the working directory."""
    import os

    from aces_bench.emitters.accepted import CACHE_ENV

    work = repo / WORK_DIR
    ignore = work / ".gitignore"
    if not ignore.is_file():
        work.mkdir(parents=True, exist_ok=True)
        write_text(ignore, "# written by aces-bench ci: its packet, last good run and caches are not sources\n*\n")
    os.environ.setdefault(CACHE_ENV, str(work / "cache" / "emit"))
    return work


def main(argv: list[str]) -> int:
    from aces_bench.ci.changes import detect, head_commit, repo_root

    args = parser().parse_args(argv)
    repo = repo_root(args.repo.resolve())
    roots = [(repo / s).resolve() for s in (args.skills or [Path(".")])]
    support, bundles = _config(args.config)
    changed, _ = detect(repo, args.since, roots, support=support, bundles=bundles)
    work = ignored_work_dir(repo)
    out = work / "ci" if args.out is None else (args.out if args.out.is_absolute() else Path.cwd() / args.out).resolve()
    baseline = args.baseline if args.baseline.is_absolute() else repo / args.baseline
    from aces_bench.ci.policy import load_policy

    policy = load_policy(args.policy)
    commit, dirty = head_commit(repo)
    if not changed:
        print(f"ci: no skill changed since {args.since}: nothing to run (pass)")
        return 0
    for c in changed:
        print(f"ci: run {c.name}: {c.reason}")
    from aces_bench.ci.run import run_ci
    from aces_bench.judges.factory import build_judge
    from aces_bench.judges.options import judge_from_options

    spec = judge_from_options(args.suggest_model, args.suggest_base_url, args.suggest_api_key_env, prefix="--suggest")
    judge = build_judge(spec) if spec is not None else None
    result = run_ci(changed, args.overrides, out, baseline, policy, since=args.since, commit=commit, dirty=dirty,
                    suggest_judge=judge)
    from aces_bench.run.reuse import current_plan

    reuse = current_plan(result.run_dir)
    if reuse is not None:
        print(f"ci: {reuse.summary()}")
    for line in result.verdict.reasons():
        print(f"ci: {line}")
    print(f"ci: {'PASS' if result.verdict.passed else 'FAIL'}; evidence packet: {result.packet}")
    if result.verdict.passed and args.save_baseline:
        from aces_bench.ci.compare import store_baseline

        store_baseline(result.run_dir, result.run_dir / "report", baseline)
        print(f"ci: stored as the last good run: {baseline}")
    return 0 if result.verdict.passed else 1



